"""The evidence labels of the demo's autos, read as a lawyer reads them (#32 item 3): the
D-13 map names the late trip's origin, its speed chart marks the scheduled departure, the
A-07 names the skipped stop, no "a 0 m do ponto", one duration format, one time-zone
wording, a disc legend that prints large enough to read."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess

import pytest
from matplotlib.colors import same_color
from sqlalchemy import select

import dockets.charts as charts
from dockets.document import chart_png, render_pdf
from dockets.store import Docket, EvidenceBundle

ISSUER = "Prefeitura Municipal de João Neiva — Órgão Gerencial do Transporte Coletivo"


def _auto(sessions, code):
    with sessions() as session:
        docket = session.scalar(select(Docket).where(Docket.code == code))
        bundle = session.get(EvidenceBundle, docket.id).data
        session.expunge(docket)
    return docket, bundle


def _pdf_text(pdf: bytes, tmp_path) -> str:
    path = tmp_path / "auto.pdf"
    path.write_bytes(pdf)
    return " ".join(subprocess.run([shutil.which("pdftotext"), str(path), "-"], capture_output=True, text=True,
                                   check=True).stdout.split())


@pytest.fixture
def texts(sessions, calendar, tmp_path):
    """Each demo auto's PDF text, by code."""
    with sessions() as session:
        codes = list(session.scalars(select(Docket.code)))
    found = {}
    for code in codes:
        docket, bundle = _auto(sessions, code)
        found[code] = _pdf_text(render_pdf(docket, bundle, calendar=calendar, issuer_name=ISSUER), tmp_path)
    return found


def _figure(monkeypatch, docket, bundle, kind):
    figures = []
    encode = charts._png
    monkeypatch.setattr(charts, "_png", lambda fig: figures.append(fig) or encode(fig))
    assert chart_png(docket, bundle, kind) is not None
    [fig] = figures
    return fig


def _texts_of(fig) -> list[str]:
    legends = [t.get_text() for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
               for t in legend.get_texts()]
    return [t.get_text() for t in fig.texts] + [t.get_text() for ax in fig.axes for t in ax.texts] + legends


def test_the_d13_map_names_the_late_trips_origin_not_its_end(sessions, monkeypatch):
    docket, bundle = _auto(sessions, "D-13")
    late = docket.infraction["evidence"]["trips"][0]  # 101-DU-1-2200, from Terminal Santo Antônio
    fig = _figure(monkeypatch, docket, bundle, "mapa")
    texts = _texts_of(fig)
    assert late["trip_id"] == "101-DU-1-2200"
    assert "Terminal Santo Antônio (origem da viagem)" in texts
    assert "Fim" not in texts and "Início" not in texts  # the day's ends are named as such
    assert charts.LAST_OF_DAY in texts


def test_the_d13_speed_chart_marks_the_scheduled_departure(sessions, monkeypatch):
    docket, bundle = _auto(sessions, "D-13")
    scheduled = docket.infraction["evidence"]["trips"][0]["scheduled_departure"]  # 22:00, left at 22:07:20
    assert scheduled.startswith("2026-12-01T22:00:00")
    fig = _figure(monkeypatch, docket, bundle, "velocidade")
    assert "Partida programada (22:00)" in _texts_of(fig)
    [ax] = fig.axes
    x = charts._mpl_dates([dt.datetime.fromisoformat(scheduled).timestamp()])[0]
    marks = [line for line in ax.lines if same_color(line.get_color(), charts._MARK_COLOR)]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == pytest.approx([x, x], abs=1e-9)


def test_the_a07_names_the_skipped_stop(texts):
    assert "não passou a menos de 40 m do ponto de parada Rua Marechal Castelo Branco – Rua Cachoeiro (2105)" \
        in texts["A-07"]
    assert "ponto(s)" not in texts["A-07"]


def test_a_place_at_the_stop_is_at_the_stop_not_0_m_from_it(texts):
    assert "no ponto Terminal Santo Antônio (9002)" in texts["D-13"]
    assert not any(re.search(r"\ba 0 m\b", text) for text in texts.values())


def test_durations_read_one_way_throughout(texts):
    # D-11: 130 s off the itinerary (the episode's evidence says 2 min 10 s): not "2,2 min"
    assert "por 752 m e 2 min 10 s, chegando a 155 m do traçado" in texts["D-11"]
    assert texts["D-11"].count("2 min 10 s") == 2  # the description and the episode's row
    for code, text in texts.items():
        assert not re.search(r"\d,\d+ (?:min|h)\b", text), code


def test_one_time_zone_wording(texts):
    for code, text in texts.items():
        assert "(horário de Brasília, UTC-03)" in text, code
        assert "horário local" not in text, code


def test_the_disc_legend_prints_large_enough_to_read(sessions, monkeypatch, calendar, tmp_path):
    """Its printed size: the figure's font size scaled by the image's resolution on the
    page (pdfimages -list: x-ppi), at least 7 pt; at 60 dpi that is 6 px a letter."""
    docket, bundle = _auto(sessions, "D-11")
    fig = _figure(monkeypatch, docket, bundle, "disco")
    [legend] = fig.legends
    sizes = [t.get_fontsize() for t in legend.get_texts()]
    path = tmp_path / "auto.pdf"
    path.write_bytes(render_pdf(docket, bundle, calendar=calendar, issuer_name=ISSUER))
    rows = [r.split() for r in subprocess.run([shutil.which("pdfimages"), "-list", str(path)], capture_output=True,
                                              text=True, check=True).stdout.splitlines()[2:]]
    width = int(fig.bbox.width)
    [ppi] = [float(r[12]) for r in rows if r[2] == "image" and int(r[3]) == width and int(r[4]) == int(fig.bbox.height)]
    printed = min(sizes) * charts.DPI / ppi
    assert printed >= 7, f"legend prints at {printed:.1f} pt"
