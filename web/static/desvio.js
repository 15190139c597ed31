// The detour map of the occurrences form: the chosen itinerary (GTFS shape and stops) drawn
// as vectors -- there is no tile server offline -- and the fiscal's clicks drawn as the
// detour. The form's hidden "geometry" field always holds the GeoJSON of what is drawn
// (RFC 7946, [lon, lat]); the server validates it as the engine would.
"use strict";

(function () {
  const container = document.getElementById("mapa-desvio");
  const data = document.getElementById("itinerarios");
  const field = document.getElementById("geometry");
  if (!container || !data || !field || !window.L) {
    return;
  }
  const itineraries = JSON.parse(data.textContent);
  const select = document.getElementById("itinerario");
  const situation = document.getElementById("desvio-situacao");
  const fieldset = document.getElementById("desvio");
  const DECIMALS = 1e6; // ~0.1 m

  const map = L.map(container, { zoomSnap: 0.25, doubleClickZoom: false });
  map.attributionControl.setPrefix("Leaflet");
  const itineraryLayer = L.layerGroup().addTo(map);
  const detourLayer = L.layerGroup().addTo(map);
  let points = [];

  function shape() {
    return fieldset.querySelector('input[name="forma"]:checked').value; // "linha" | "area"
  }

  function showItinerary(index) {
    const itinerary = itineraries[index];
    itineraryLayer.clearLayers();
    const line = L.polyline(itinerary.line, { color: "#0b4f6c", weight: 5, opacity: 0.75, interactive: false });
    line.addTo(itineraryLayer);
    for (const stop of itinerary.stops) {
      // clicks on a stop still reach the map (bubblingMouseEvents): a stop can be a point of the detour
      L.circleMarker([stop.lat, stop.lon], { radius: 5, color: "#0b4f6c", weight: 2, fillColor: "#ffffff",
        fillOpacity: 1 }).bindTooltip(stop.name).addTo(itineraryLayer);
    }
    map.fitBounds(line.getBounds(), { padding: [24, 24] });
  }

  function round(value) {
    return Math.round(value * DECIMALS) / DECIMALS;
  }

  function geometry() {
    const coordinates = points.map((p) => [round(p.lng), round(p.lat)]);
    if (shape() === "area") {
      return coordinates.length >= 3
        ? { type: "Polygon", coordinates: [coordinates.concat([coordinates[0]])] } : null;
    }
    return coordinates.length >= 2 ? { type: "LineString", coordinates: coordinates } : null;
  }

  function redraw() {
    detourLayer.clearLayers();
    const style = { color: "#a4410e", weight: 4, interactive: false };
    if (shape() === "area" && points.length >= 3) {
      L.polygon(points, style).addTo(detourLayer);
    } else if (points.length >= 2) {
      L.polyline(points, style).addTo(detourLayer);
    }
    for (const p of points) {
      L.circleMarker(p, { radius: 4, color: "#a4410e", fillOpacity: 1, interactive: false }).addTo(detourLayer);
    }
    const drawn = geometry();
    field.value = drawn ? JSON.stringify(drawn) : "";
    const n = points.length;
    const needed = shape() === "area" ? 3 : 2;
    if (n === 0) {
      situation.textContent = "Nenhum ponto marcado.";
    } else if (!drawn) {
      situation.textContent = `${n} ponto(s) marcado(s): marque ao menos ${needed} para o traçado.`;
    } else {
      situation.textContent = `${n} pontos marcados: ${shape() === "area" ? "área" : "caminho"} do desvio pronto.`;
    }
  }

  map.on("click", (event) => {
    points.push(event.latlng);
    redraw();
  });
  select.addEventListener("change", () => showItinerary(Number(select.value)));
  for (const radio of fieldset.querySelectorAll('input[name="forma"]')) {
    radio.addEventListener("change", redraw);
  }
  document.getElementById("desvio-desfazer").addEventListener("click", () => {
    points.pop();
    redraw();
  });
  document.getElementById("desvio-limpar").addEventListener("click", () => {
    points = [];
    redraw();
  });
  showItinerary(Number(select.value));
  redraw();
})();
