// Picking disputed readings on the auto's speed chart and map (issue 30). Each circle of
// the server-drawn SVG carries its bundle line ("tachograph:123"): a click marks it as the
// evidence table's checkbox does (that checkbox when the table lists it, else a hidden
// field of the same name); a drag on the speed chart fills the span fields with the first
// and last reading it covers, a drag on the map marks the readings inside its box. Nothing
// here is trusted: the server checks every line and span against the bundle.
"use strict";

(function () {
  const form = document.getElementById("form-contestadas");
  const picker = document.getElementById("escolher-leituras");
  if (!form || !picker) {
    return;
  }
  const said = document.getElementById("leituras-escolhidas");
  const dots = Array.from(picker.querySelectorAll("circle[data-leitura]"));
  const DRAG_PX = 4; // a smaller move is a click

  function field(type, value) {
    return Array.from(form.querySelectorAll('input[type="' + type + '"][name="leituras"]'))
      .find((input) => input.value === value);
  }

  function picked(value) {
    const box = field("checkbox", value);
    return box ? box.checked : Boolean(field("hidden", value));
  }

  function pick(value, on) {
    const box = field("checkbox", value);
    if (box) {
      if (!box.disabled) { // already disputed: it stays as recorded
        box.checked = on;
      }
      return;
    }
    const kept = field("hidden", value);
    if (on && !kept) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = "leituras";
      input.value = value;
      form.appendChild(input);
    } else if (!on && kept) {
      kept.remove();
    }
  }

  function refresh() {
    const chosen = new Set();
    dots.forEach((dot) => {
      const on = picked(dot.dataset.leitura);
      dot.classList.toggle("contestada", on);
      dot.setAttribute("aria-pressed", on ? "true" : "false");
      if (on) {
        chosen.add(dot.dataset.leitura);
      }
    });
    const n = chosen.size;
    said.textContent = n === 0 ? "" : n === 1 ? "1 leitura escolhida." : n + " leituras escolhidas.";
  }

  function toggle(dot) {
    if (dot.classList.contains("ja-contestada")) { // recorded already: nothing to add or undo
      return;
    }
    pick(dot.dataset.leitura, !picked(dot.dataset.leitura));
    refresh();
  }

  function hour(local) {
    return local.slice(11);
  }

  function chooseSpan(inside) {
    if (inside.length === 0) {
      return;
    }
    const times = inside.map((dot) => dot.dataset.hora).sort();
    form.querySelector("#contestar-veiculo").value = picker.dataset.veiculo;
    form.querySelector("#contestar-fonte").value = "tachograph";
    form.querySelector("#contestar-inicio").value = times[0];
    form.querySelector("#contestar-fim").value = times[times.length - 1];
    said.textContent = "Intervalo do tacógrafo de " + hour(times[0]) + " a " + hour(times[times.length - 1]) +
      " escolhido (" + inside.length + (inside.length === 1 ? " leitura)." : " leituras).");
  }

  function svgPoint(svg, event) {
    const point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  }

  // horizontal: a drag spans time (the speed chart); else a box (the map)
  function draggable(svg, horizontal, done) {
    const band = svg.querySelector("rect.arrasto");
    let start = null;
    let target = null;
    svg.addEventListener("pointerdown", (event) => {
      start = svgPoint(svg, event);
      target = event.target.closest("circle[data-leitura]");
      svg.setPointerCapture(event.pointerId);
    });
    svg.addEventListener("pointermove", (event) => {
      if (!start) {
        return;
      }
      const now = svgPoint(svg, event);
      band.setAttribute("x", Math.min(start.x, now.x));
      band.setAttribute("width", Math.abs(now.x - start.x));
      if (!horizontal) {
        band.setAttribute("y", Math.min(start.y, now.y));
        band.setAttribute("height", Math.abs(now.y - start.y));
      }
    });
    svg.addEventListener("pointerup", (event) => {
      if (!start) {
        return;
      }
      const end = svgPoint(svg, event);
      const from = start;
      start = null;
      band.setAttribute("width", 0);
      if (Math.abs(end.x - from.x) < DRAG_PX && Math.abs(end.y - from.y) < DRAG_PX) {
        if (target) {
          toggle(target);
        }
        return;
      }
      const [x0, x1] = [Math.min(from.x, end.x), Math.max(from.x, end.x)];
      const [y0, y1] = [Math.min(from.y, end.y), Math.max(from.y, end.y)];
      const inside = Array.from(svg.querySelectorAll("circle[data-leitura]")).filter((dot) => {
        const x = Number(dot.getAttribute("cx"));
        const y = Number(dot.getAttribute("cy"));
        return x >= x0 && x <= x1 && (horizontal || (y >= y0 && y <= y1));
      });
      done(inside);
    });
  }

  draggable(document.getElementById("grafico-contestar"), true, chooseSpan);
  draggable(document.getElementById("mapa-contestar"), false, (inside) => {
    inside.filter((dot) => !dot.classList.contains("ja-contestada")).forEach((dot) => pick(dot.dataset.leitura, true));
    refresh();
  });
  dots.forEach((dot) => dot.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      toggle(dot);
    }
  }));
  form.addEventListener("change", (event) => {
    if (event.target.name === "leituras") {
      refresh();
    }
  });
  refresh();
})();
