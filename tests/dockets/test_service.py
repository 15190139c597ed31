"""The docket service on SQLite: idempotent ingestion, numbering, roles, isolation, audit."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from sqlalchemy import func, select
from stores import verified_entries

from dockets import workflow
from dockets.audit import AuditError
from dockets.service import (
    SYSTEM,
    Actor,
    DocketError,
    Forbidden,
    NotFound,
    get_docket,
    history,
    ingest,
    perform,
    visible,
)
from dockets.sink import ingest_replay
from dockets.store import Docket, EvidenceBundle, User

D = dt.date


@pytest.fixture(autouse=True)
def _users(actors):
    global FISCAL, GESTOR, TRD, VNV
    FISCAL, GESTOR, TRD, VNV = (actors[n] for n in ("fiscal", "gestor", "trd", "vnv"))


def _ids(sessions, actor):
    with sessions() as session:
        return {d.code for d in session.scalars(visible(actor))}


def test_the_demo_day_makes_one_draft_per_confirmed_infraction_with_its_bundle(sessions, demo_day):
    confirmed = [r for r in demo_day.records() if r["status"] == "confirmed"]
    with sessions() as session:
        dockets = session.scalars(select(Docket)).all()
        assert sorted(d.infraction_id for d in dockets) == sorted(r["infraction_id"] for r in confirmed)
        assert {d.stage for d in dockets} == {"rascunho"}
        for docket in dockets:
            bundle = session.get(EvidenceBundle, docket.id)
            assert bundle.sha256 == docket.bundle_sha256


def test_ingesting_the_same_infractions_again_makes_no_new_docket(sessions, demo_day):
    report = ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, demo_day.records())
    # 6 records: 5 confirmed already stored, 1 exempt_art45 (D-22) never a docket
    assert (report.created, report.already, report.not_confirmed) == ([], 5, 1)
    with sessions() as session:
        assert session.scalar(select(func.count(Docket.id))) == 5


def test_a_plate_and_place_are_recorded_for_art5(sessions):
    with sessions() as session:
        docket = session.scalar(select(Docket).where(Docket.code == "D-11"))
        assert docket.plate and docket.place.startswith("a ") and "lat." in docket.place


def _lavrar_all(sessions, calendar):
    with sessions.begin() as session:
        for docket in session.scalars(select(Docket).order_by(Docket.id)).all():
            if docket.stage == workflow.Stage.RASCUNHO.value:  # not lavrado with an auto of its drive (art. 10)
                perform(session, FISCAL, docket.id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)


def test_an_operator_sees_no_draft_not_even_its_own(sessions):
    # art. 5 § 3º: the auto reaches the company once lavrado
    assert _ids(sessions, TRD) == set() and _ids(sessions, VNV) == set()
    assert len(_ids(sessions, FISCAL)) == 5


def test_an_operator_sees_only_its_own_dockets(sessions, calendar):
    _lavrar_all(sessions, calendar)
    assert _ids(sessions, TRD) == {"A-07", "C-01", "D-11", "D-21"}
    assert _ids(sessions, VNV) == {"D-13"}
    assert _ids(sessions, FISCAL) == {"A-07", "C-01", "D-11", "D-21", "D-13"}
    assert _ids(sessions, Actor(9, "visitante")) == set()


def test_another_operators_docket_is_not_found_rather_than_forbidden(sessions, calendar):
    _lavrar_all(sessions, calendar)
    with sessions() as session:
        d13 = session.scalar(select(Docket.id).where(Docket.code == "D-13"))
        with pytest.raises(NotFound):
            get_docket(session, TRD, d13)
        with pytest.raises(NotFound):
            perform(session, TRD, d13, workflow.ApresentarDefesa(on=D(2026, 12, 4)), None)
        with pytest.raises(NotFound):
            history(session, TRD, d13)


def test_autos_are_numbered_in_sequence_per_year_when_lavrados(sessions, calendar):
    with sessions.begin() as session:
        ids = session.scalars(select(Docket.id).where(Docket.code != "D-11").order_by(Docket.id)).all()
        for docket_id, on in zip(ids, [D(2026, 12, 2), D(2026, 12, 30), D(2027, 1, 4), D(2027, 1, 4)]):
            perform(session, FISCAL, docket_id, workflow.Lavrar(on=on), calendar)
    with sessions() as session:
        labels = {d.code: d.label for d in session.scalars(select(Docket))}
    # the A-07 lavrado first takes 0001, the D-11 of its drive, lavrado in the same act (art. 10), 0002
    assert labels == {"A-07": "0001/2026", "D-11": "0002/2026", "C-01": "0003/2026", "D-13": "0001/2027",
                      "D-21": "0002/2027"}


def test_roles_are_enforced_by_the_service(sessions, calendar):
    with sessions.begin() as session:
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
        with pytest.raises(NotFound):  # a draft does not exist for the operator
            perform(session, TRD, docket_id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)
        with pytest.raises(Forbidden):
            perform(session, GESTOR, docket_id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)
        perform(session, FISCAL, docket_id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)
        with pytest.raises(Forbidden):
            perform(session, FISCAL, docket_id,
                    workflow.JulgarDefesa(on=D(2026, 12, 3), procedente=True, fundamentacao="x"), calendar)
        with pytest.raises(Forbidden):
            perform(session, TRD, docket_id, workflow.Notificar(on=D(2026, 12, 3)), calendar)


def test_a_workflow_refusal_is_a_docket_error_and_changes_nothing(sessions, calendar):
    with sessions.begin() as session:
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
        perform(session, FISCAL, docket_id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)
    with sessions() as session:
        with pytest.raises(DocketError, match="notificação"):
            perform(session, TRD, docket_id, workflow.ApresentarDefesa(on=D(2026, 12, 4)), calendar)
        session.rollback()
    with sessions() as session:
        assert session.get(Docket, docket_id).stage == "lavrado"


def _titular(sessions, username="titular") -> Actor:
    from dockets.users import create_user

    with sessions.begin() as session:
        return Actor.of(create_user(session, username=username, full_name="Titular do Órgão", role="titular",
                                    password="senha-de-teste"))


def _appealed(sessions, calendar) -> int:
    """The demo's D-11, judged procedente by GESTOR and appealed by TRD."""
    with sessions.begin() as session:
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
        for actor, action in [
            (FISCAL, workflow.Lavrar(on=D(2026, 12, 2))),
            (FISCAL, workflow.Notificar(on=D(2026, 12, 3))),
            (TRD, workflow.ApresentarDefesa(on=D(2026, 12, 10))),
            (GESTOR, workflow.JulgarDefesa(on=D(2026, 12, 15), procedente=True, fundamentacao="Registros conferem.")),
            (TRD, workflow.InterporRecurso(on=D(2026, 12, 21))),
        ]:
            perform(session, actor, docket_id, action, calendar)
    return docket_id


DENY = workflow.JulgarRecurso(on=D(2027, 1, 11), provido=False, fundamentacao="Mantido.")


def test_the_titular_judges_the_appeal_the_gestor_who_judged_the_defence_may_not(sessions, calendar):
    titular = _titular(sessions)
    docket_id = _appealed(sessions, calendar)
    for actor in (GESTOR, FISCAL, TRD):  # the gestor who judged the defence, and every other role
        with sessions() as session:
            with pytest.raises(Forbidden, match="não pode julgar recurso"):
                perform(session, actor, docket_id, DENY, calendar)
    with sessions() as session:
        with pytest.raises(NotFound):  # another operator does not even see it
            perform(session, VNV, docket_id, DENY, calendar)
    with sessions.begin() as session:
        perform(session, titular, docket_id, DENY, calendar)
    with sessions() as session:
        assert session.get(Docket, docket_id).stage == "multa_devida"
        judges = [(e.action, e.actor_id) for e in history(session, TRD, docket_id)][-3:]
        assert judges == [("JulgarDefesa", GESTOR.user_id), ("InterporRecurso", TRD.user_id),
                          ("JulgarRecurso", titular.user_id)]


def test_the_appeal_judgment_pdf_is_kept_at_its_act_apart_from_the_defence_judgment(sessions, calendar, signing_key):
    from dockets.service import appeal_pdf_of, judgment_pdf_of
    from dockets.signing import check
    from dockets.store import AppealPdf, JudgmentPdf

    titular = _titular(sessions)
    docket_id = _appealed(sessions, calendar)  # its defence judged by a shell that rendered none
    rendered = []

    def judgment(docket, action, judge):
        rendered.append((type(action).__name__, judge.user_id))
        return b"%PDF-1.4 recurso " + action.fundamentacao.encode()

    with sessions() as session:
        with pytest.raises(NotFound, match="recurso deste auto ainda não foi julgado"):
            appeal_pdf_of(session, TRD, docket_id)
    with sessions.begin() as session:
        perform(session, titular, docket_id, DENY, calendar, judgment_renderer=judgment, signer=signing_key)
    assert rendered == [("JulgarRecurso", titular.user_id)]
    with sessions() as session:
        kept = appeal_pdf_of(session, TRD, docket_id)
        assert kept.data == b"%PDF-1.4 recurso Mantido."
        assert check(kept.signature, kept.data, {signing_key.key_id: signing_key.public})[0]
        entry = history(session, TRD, docket_id)[-1]
        assert entry.action == "JulgarRecurso"
        assert entry.payload["appeal_pdf_sha256"] == entry.payload["state"]["appeal_pdf_sha256"] == kept.sha256
        assert "judgment_pdf_sha256" not in entry.payload["state"]  # the defence's judgment kept none
        with pytest.raises(NotFound, match="registrado sem o seu PDF"):
            judgment_pdf_of(session, TRD, docket_id)
        with pytest.raises(NotFound):  # another operator's appeal is not there at all
            appeal_pdf_of(session, VNV, docket_id)
        assert session.scalar(select(func.count()).select_from(AppealPdf)) == 1
        assert session.scalar(select(func.count()).select_from(JudgmentPdf)) == 0
        assert verified_entries(session) > 0


def test_who_judged_the_defence_may_not_judge_the_appeal_even_as_titular(sessions, calendar):
    docket_id = _appealed(sessions, calendar)
    with sessions.begin() as session:  # the gestor who judged the defence is made titular since
        session.execute(sa.update(User).where(User.id == GESTOR.user_id).values(role="titular"))
    promoted = Actor(GESTOR.user_id, "titular", None, GESTOR.name)
    with sessions() as session:
        with pytest.raises(Forbidden, match=r"Quem julgou a defesa não julga o recurso.*art\. 7º, § 3º"):
            perform(session, promoted, docket_id, DENY, calendar)
    other = _titular(sessions, "titular2")
    with sessions.begin() as session:
        perform(session, other, docket_id, DENY, calendar)


def test_the_whole_contest_is_in_the_audit_log_and_the_chain_verifies(sessions, calendar):
    titular = _titular(sessions)
    with sessions.begin() as session:
        docket_id = session.scalar(select(Docket.id).where(Docket.code == "D-11"))
        steps = [
            (FISCAL, workflow.Lavrar(on=D(2026, 12, 2))),
            (FISCAL, workflow.Notificar(on=D(2026, 12, 3))),
            (TRD, workflow.ApresentarDefesa(on=D(2026, 12, 10))),
            (GESTOR, workflow.JulgarDefesa(on=D(2026, 12, 15), procedente=True, fundamentacao="Registros conferem.")),
            (TRD, workflow.InterporRecurso(on=D(2026, 12, 21))),
            (titular, workflow.JulgarRecurso(on=D(2027, 1, 11), provido=False, fundamentacao="Mantido.")),
        ]
        for actor, action in steps:
            perform(session, actor, docket_id, action, calendar,
                    attachments=[("defesa.pdf", "application/pdf", b"%PDF-1.4 x")]
                    if isinstance(action, workflow.ApresentarDefesa) else ())
    with sessions() as session:
        docket = session.get(Docket, docket_id)
        assert docket.stage == "multa_devida"
        actions = [e.action for e in history(session, TRD, docket_id)]
        assert actions == ["Registrar", "Lavrar", "Notificar", "ApresentarDefesa", "JulgarDefesa",
                           "InterporRecurso", "JulgarRecurso"]
        # 5 users created + 5 dockets registered + 6 steps + the A-07 lavrado with the D-11 (art. 10)
        assert verified_entries(session) == 17


def test_the_audit_log_refuses_updates_and_deletes(sessions):
    with sessions() as session:
        with pytest.raises(sa.exc.DatabaseError, match="append-only"):
            session.execute(sa.text("UPDATE audit_log SET action = 'x'"))
        session.rollback()
        with pytest.raises(sa.exc.DatabaseError, match="append-only"):
            session.execute(sa.text("DELETE FROM audit_log"))


def test_the_audit_log_refuses_insert_or_replace(sessions):
    # before: on SQLite, REPLACE deleted entry 2 without firing the DELETE trigger and wrote
    # another in its place
    with sessions() as session:
        row = session.execute(sa.text("SELECT * FROM audit_log WHERE id = 2")).mappings().one()
        columns = ", ".join(row.keys())
        values = {**row, "action": "Apagar"}
        for verb in ("INSERT OR REPLACE", "REPLACE"):
            with pytest.raises(sa.exc.DatabaseError, match="append-only"):
                session.execute(sa.text(f"{verb} INTO audit_log ({columns}) VALUES "
                                        f"({', '.join(':' + c for c in row.keys())})"), values)
            session.rollback()
        assert session.execute(sa.text("SELECT action FROM audit_log WHERE id = 2")).scalar() == row["action"]
        assert verified_entries(session) > 2


def test_a_tampered_chain_is_detected(sessions):
    with sessions.begin() as session:
        session.execute(sa.text("DROP TRIGGER audit_log_no_update"))  # an attacker with DDL rights
        session.execute(sa.text("UPDATE audit_log SET payload = '{}' WHERE id = 2"))
    with sessions() as session:
        with pytest.raises(AuditError, match="registro de auditoria 2 não confere"):
            verified_entries(session)


def test_anistia_only_for_a_first_time_operator(sessions, calendar):
    with sessions.begin() as session:
        a07, d11 = (session.scalar(select(Docket.id).where(Docket.code == c)) for c in ("A-07", "D-11"))
        perform(session, FISCAL, a07, workflow.Lavrar(on=D(2026, 12, 2)), calendar)  # and the D-11 (art. 10)
        for docket_id in (a07, d11):
            perform(session, FISCAL, docket_id, workflow.Notificar(on=D(2026, 12, 3)), calendar)
        perform(session, GESTOR, a07, workflow.RegistrarPagamento(on=D(2026, 12, 7)), calendar)
    earlier_paid, later = sorted([a07, d11], key=lambda i: _occurred(sessions, i))
    with sessions.begin() as session:
        if earlier_paid == a07:
            with pytest.raises(DocketError):
                perform(session, GESTOR, d11, workflow.Anistiar(on=D(2026, 12, 8), ato="Decreto 1/2026"), calendar)
        else:
            perform(session, GESTOR, d11, workflow.Anistiar(on=D(2026, 12, 8), ato="Decreto 1/2026"), calendar)


def _occurred(sessions, docket_id):
    with sessions() as session:
        return session.get(Docket, docket_id).occurred_at


def test_ingest_of_a_non_confirmed_record_makes_nothing(sessions, demo_day):
    record = dict(demo_day.record("D-11"), infraction_id="f" * 32, status="justified")
    with sessions.begin() as session:
        report = ingest(session, [record], plates={}, ufir_brl=1.0641)
    assert report.not_confirmed == 1 and not report.created
    assert SYSTEM.role == "sistema"


def test_ingest_of_a_confirmed_record_without_a_fine_makes_nothing(sessions, demo_day):
    # a finding for the Órgão under pena de rescisão (Canarana's art. 6º II): never an auto
    record = dict(demo_day.record("D-11"), infraction_id="e" * 32, code="art. 6º II", group="rescisão", fine_ufir=0)
    with sessions.begin() as session:
        report = ingest(session, [record], plates={}, ufir_brl=1.0641)
    assert report.without_fine == 1 and not report.created


def _draft(sessions, code):
    with sessions() as session:
        return session.scalar(select(Docket).where(Docket.code == code))


def test_a_newer_record_of_a_draft_updates_it_its_bundle_and_the_audit_log(sessions, demo_day):
    # the infractions topic is a change log: D-11 leaves the engine when its trip arrives,
    # and again (same id) once the day's matching fills in a trip_id
    before = _draft(sessions, "D-11")
    record = dict(demo_day.record("D-11"), trip_id="101-DU-9-9999")
    report = ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, [record])
    assert (report.created, report.updated, report.already) == ([], [before.id], 0)
    after = _draft(sessions, "D-11")
    assert (after.trip_id, after.infraction) == ("101-DU-9-9999", record)
    assert after.bundle_sha256 != before.bundle_sha256  # the bundle carries the record
    with sessions() as session:
        bundle = session.get(EvidenceBundle, after.id)
        assert bundle.sha256 == after.bundle_sha256
        [entry] = [e for e in history(session, FISCAL, after.id) if e.action == "Atualizar registro"]
        assert entry.payload["changed"] == {"trip_id": "101-DU-9-9999"}
    # the same record again changes nothing
    again = ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, [record])
    assert (again.updated, again.already) == ([], 1)


def test_a_lavrado_auto_stays_as_issued_whatever_record_comes_later(sessions, demo_day, calendar):
    docket_id = _draft(sessions, "D-11").id
    with sessions.begin() as session:
        perform(session, FISCAL, docket_id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)
    record = dict(demo_day.record("D-11"), trip_id="101-DU-9-9999")
    report = ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, [record])
    assert (report.updated, report.noted, report.already) == ([], [docket_id], 0)
    lavrado = _draft(sessions, "D-11")
    assert (lavrado.trip_id, lavrado.infraction) == (demo_day.record("D-11")["trip_id"], demo_day.record("D-11"))
    # the fiscal sees it in the auto's history, with the difference (engine.late: a day judged again)
    with sessions() as session:
        [entry] = [e for e in history(session, FISCAL, docket_id) if e.action == "NovosDadosAposLavratura"]
    assert entry.payload["changed"] == {"trip_id": {"lavrado": demo_day.record("D-11")["trip_id"],
                                                    "novo": "101-DU-9-9999"}}
    assert entry.payload["note"].startswith("Novos dados após a lavratura (trip_id: ")
    assert "101-DU-9-9999" in entry.payload["note"]
    # the same record again is noted once
    again = ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, [record])
    assert (again.noted, again.already) == ([], 1)


def test_a_draft_whose_record_turned_justified_is_not_lavrado(sessions, demo_day, calendar):
    # an occurrence registered after the infraction turns its record justified (same id)
    record = dict(demo_day.record("D-11"), status="justified")
    report = ingest_replay(sessions, demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context, [record])
    docket = _draft(sessions, "D-11")
    assert report.updated == [docket.id] and docket.infraction["status"] == "justified"
    with sessions.begin() as session, pytest.raises(DocketError, match="justified"):
        perform(session, FISCAL, docket.id, workflow.Lavrar(on=D(2026, 12, 2)), calendar)
    assert _draft(sessions, "D-11").stage == "rascunho"


def _repeat(session, code: str, days_later: int) -> Docket:
    """The same operator's same infraction again, `days_later` after the stored one."""
    first = session.scalar(select(Docket).where(Docket.code == code))
    record = dict(first.infraction)
    occurred = dt.datetime.fromisoformat(record["occurred_at"]) + dt.timedelta(days=days_later)
    record.update(infraction_id=f"{days_later:032d}", occurred_at=occurred.isoformat(),
                  service_date=occurred.date().isoformat())
    report = ingest(session, [record], plates={}, ufir_brl=float(first.ufir_brl))
    return session.get(Docket, report.created[0])


def _recidivism_calendar(window_days: int):
    # a law that doubles a recidivist's fine (Conselheiro Lafaiete's art. 42 § 1º reads so),
    # with João Neiva's terms so that the demo's autos walk their usual path
    from dockets.calendar import BusinessCalendar
    from rules.joao_neiva.anexo_i import TERMS
    from rules.law import Law, Recidivism

    law = Law("reincidente", "Lei de teste", "UFIR", terms=TERMS, recidivism=Recidivism(2, "art. 42, § 1º"))
    return BusinessCalendar.for_municipality("ES", [D(2026, 12, 8)], law=law, recidivism_window_days=window_days)


def _upheld(session, docket_id: int, calendar) -> None:
    for act in (workflow.Lavrar(D(2026, 12, 2)), workflow.Notificar(D(2026, 12, 3)),
                workflow.ApresentarDefesa(D(2026, 12, 4)), workflow.JulgarDefesa(D(2026, 12, 7), True, "Provado.")):
        perform(session, SYSTEM, docket_id, act, calendar)


def test_a_recidivists_fine_is_doubled_at_lavratura_with_the_earlier_auto_named(sessions):
    calendar = _recidivism_calendar(365)
    with sessions.begin() as session:
        first = session.scalar(select(Docket).where(Docket.code == "D-11"))
        _upheld(session, first.id, calendar)
        again = _repeat(session, "D-11", 30)
        perform(session, SYSTEM, again.id, workflow.Lavrar(D(2026, 12, 8)), calendar)
        # D-11: group D, 200 UFIR; upheld 30 days before within 365: 200 × 2 = 400
        assert again.fine_ufir == 400
        assert f"Reincidência: auto nº {first.label}" in again.description and "200 × 2 = 400 UFIR" in again.description
        assert history(session, SYSTEM, again.id)[-1].payload["reincidencia"] == first.label


def test_an_earlier_auto_not_upheld_or_outside_the_window_yields_nothing(sessions):
    with sessions.begin() as session:
        first = session.scalar(select(Docket).where(Docket.code == "D-11"))
        perform(session, SYSTEM, first.id, workflow.Lavrar(D(2026, 12, 2)), _recidivism_calendar(365))
        merely_lavrado = _repeat(session, "D-11", 30)
        perform(session, SYSTEM, merely_lavrado.id, workflow.Lavrar(D(2026, 12, 8)), _recidivism_calendar(365))
        assert merely_lavrado.fine_ufir == 200  # the first is only lavrado: its fine is not imposed
        perform(session, SYSTEM, first.id, workflow.Notificar(D(2026, 12, 3)), _recidivism_calendar(365))
        perform(session, SYSTEM, first.id, workflow.ApresentarDefesa(D(2026, 12, 4)), _recidivism_calendar(365))
        perform(session, SYSTEM, first.id, workflow.JulgarDefesa(D(2026, 12, 9), True, "Provado."),
                _recidivism_calendar(365))
        long_after = _repeat(session, "D-11", 40)
        # upheld, but 40 days before and the window is 30 days
        perform(session, SYSTEM, long_after.id, workflow.Lavrar(D(2026, 12, 10)), _recidivism_calendar(30))
        assert long_after.fine_ufir == 200 and "Reincidência" not in long_after.description


def test_the_judgment_pdf_is_kept_at_the_act_and_a_judgment_without_one_says_so(sessions, calendar, signing_key):
    from dockets.service import judgment_pdf_of
    from dockets.signing import check
    from dockets.store import JudgmentPdf

    rendered = []

    def judgment(docket, action, judge):
        rendered.append((docket.id, action.procedente, judge.user_id))
        return b"%PDF-1.4 julgamento " + action.fundamentacao.encode()

    with sessions.begin() as session:
        d11, c01 = (session.scalar(select(Docket.id).where(Docket.code == code)) for code in ("D-11", "C-01"))
        for docket_id in (d11, c01):
            for actor, action in [(FISCAL, workflow.Lavrar(on=D(2026, 12, 2))),
                                  (FISCAL, workflow.Notificar(on=D(2026, 12, 3))),
                                  (TRD, workflow.ApresentarDefesa(on=D(2026, 12, 10)))]:
                perform(session, actor, docket_id, action, calendar)
        with pytest.raises(NotFound, match="ainda não foi julgada"):
            judgment_pdf_of(session, GESTOR, d11)
        judge = workflow.JulgarDefesa(on=D(2026, 12, 15), procedente=True, fundamentacao="Registros conferem.")
        perform(session, GESTOR, d11, judge, calendar, judgment_renderer=judgment, signer=signing_key)
        perform(session, GESTOR, c01, judge, calendar)  # a shell that renders no judgment
    assert rendered == [(d11, True, GESTOR.user_id)]
    with sessions() as session:
        kept = judgment_pdf_of(session, TRD, d11)
        assert kept.data == b"%PDF-1.4 julgamento Registros conferem."
        assert check(kept.signature, kept.data, {signing_key.key_id: signing_key.public})[0]
        entry = history(session, TRD, d11)[-1]
        assert entry.action == "JulgarDefesa" and entry.payload["state"]["judgment_pdf_sha256"] == kept.sha256
        with pytest.raises(NotFound, match="registrado sem o seu PDF"):
            judgment_pdf_of(session, GESTOR, c01)
        with pytest.raises(NotFound):  # another operator's judgment is not there at all
            judgment_pdf_of(session, VNV, d11)
        assert session.scalar(select(func.count()).select_from(JudgmentPdf)) == 1
        assert verified_entries(session) > 0
