"""The autos de infração: the list, one auto's page, its files and the acts on it."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from dockets import disputes, service, workflow
from dockets.document import PDF_CHART_KINDS, wording
from dockets.rejudgment import DisputeError, parse_span
from dockets.service import Forbidden, NotFound
from dockets.store import AppealPdf, Docket, EvidenceBundle, JudgmentPdf, Operator
from web import auth, views
from web.dependencies import DocketId, FileUser, PageUser, State, attachment_header, read_post
from web.errors import upload_refusal
from web.format import ROLE_LABELS, date_br
from web.forms import ACTION_FORMS, CIENCIA_MEANS, SLUG_OF, ActionForm, FormError, build_action, late_registration
from web.security import MAX_FILES, Upload, UploadRefused, check_upload
from web.state import AppState

router = APIRouter()
PAGE_SIZE = 100


@router.get("/autos", response_class=HTMLResponse)
def docket_list(request: Request, user: PageUser, web: State, etapa: str = "", pagina: int = 1):
    config = web.config
    actor = user.actor
    stage = etapa if etapa in {s.value for s in workflow.Stage} else ""
    page = max(1, min(pagina, 100_000))
    with config.sessions() as session:
        listed = service.listing(session, actor, stage, page, PAGE_SIZE)
        operators = service.operator_names(session)
        rows = views.docket_rows(listed.dockets, operators, config.calendar, web.today(), web.tz,
                                config.pack.law)
    # Drafts never reach an operator (art. 5º, § 3º): no filter for them either.
    shown = [s for s in workflow.Stage if not (actor.role == "operador" and s is workflow.Stage.RASCUNHO)]
    stages = [(s.value, workflow.STAGE_LABELS[s], listed.by_stage.get(s.value, 0)) for s in shown]
    return web.render(request, "autos.html", {
        "rows": rows, "stage": stage, "stages": stages, "total": listed.total, "page": page,
        "pages": max(1, -(-listed.total // PAGE_SIZE)), "summary": views.fine_summary(listed.fines, operators),
    })


@dataclass(frozen=True)
class RefusedPleading:
    """A defence or recurso the server refused (a file of the wrong type, too large, a form
    to correct): its form is shown again with the reason and the text as typed, so a
    lawyer's pages of argument are not lost to a bad attachment."""

    slug: str
    kind: type  # the workflow action of the form
    title: str
    message: str
    text: str


@dataclass(frozen=True)
class RefusedMarks:
    """Disputed readings the server refused: the form again with the reason and what was typed."""

    message: str
    fields: dict[str, str]

    @property
    def checked(self) -> frozenset[str]:
        return frozenset(v for v in self.fields.get("leituras", "").split(",") if v)


@router.get("/autos/{docket_id}", response_class=HTMLResponse)
def docket_page(request: Request, docket_id: DocketId, user: PageUser, web: State, feito: str = ""):
    return docket_page_response(web, request, user, docket_id, done=ACTION_FORMS.get(feito),
                                marked=feito == MARKS_SLUG)


def docket_page_response(web: AppState, request: Request, user: auth.Principal, docket_id: int, *,
                         done: ActionForm | None = None, refused: RefusedPleading | None = None,
                         refused_marks: RefusedMarks | None = None, marked: bool = False,
                         status: int = 200) -> HTMLResponse | None:
    """The docket's page; None when `refused` names a form the page does not show (the
    act is not open to the user now): the caller then answers with the refusal's page."""
    config = web.config
    with config.sessions() as session:
        docket = service.get_docket(session, user.actor, docket_id)
        bundle = session.get(EvidenceBundle, docket.id)
        has_pdf, pdf_signed = service.pdf_state(session, docket.id)
        has_judgment_pdf, judgment_signed = service.pdf_state(session, docket.id, JudgmentPdf)
        has_appeal_pdf, appeal_signed = service.pdf_state(session, docket.id, AppealPdf)
        context = views.docket_context(session, docket, actor=user.actor, calendar=config.calendar,
                                       today=web.today(), tz=web.tz, charts=web.available_charts(docket, bundle),
                                       wording=wording(docket, bundle.data if bundle else None),
                                       law=config.pack.law)
        context |= views.disputes_context(session, docket, actor=user.actor, calendar=config.calendar,
                                          today=web.today(), tz=web.tz, bundle=bundle.data if bundle else None)
    if refused is not None and refused.kind not in context["allowed"]:
        return None
    if refused_marks is not None and not context["can_mark"]:
        return None
    return web.render(request, "auto.html", {
        **context, "has_pdf": has_pdf, "pdf_signed": pdf_signed, "has_bundle": bundle is not None,
        "has_judgment_pdf": has_judgment_pdf, "judgment_signed": judgment_signed,
        "has_appeal_pdf": has_appeal_pdf, "appeal_signed": appeal_signed,
        "today": web.today().isoformat(),
        "slug_of": SLUG_OF, "action_labels": workflow.ACTION_LABELS, "wf": workflow,
        "ciencia_means": CIENCIA_MEANS, "max_files": MAX_FILES,
        "max_upload_mib": config.max_upload_bytes // (1024 * 1024) or 1,
        "done": workflow.ACTION_LABELS[done.kind] if done else None,
        "refused": refused, "refused_marks": refused_marks, "marked": marked,
    }, status)


def _stored_pdf(web, user, docket_id: int, stored, suffix: str, signature: bool) -> Response:
    """A PDF kept at its act (`stored`: service.pdf_of, judgment_pdf_of or appeal_pdf_of), byte
    for byte, or its signature; named after the docket's file stem and `suffix`."""
    with web.config.sessions() as session:
        docket = service.get_docket(session, user.actor, docket_id)
        pdf = stored(session, user.actor, docket.id)
        if not signature:
            return Response(pdf.data, media_type="application/pdf",
                            headers={"Content-Disposition": attachment_header(f"{docket.file_stem}{suffix}.pdf")})
        if pdf.signature is None:
            raise NotFound("Este PDF não foi assinado.")
        name = f"{docket.file_stem}{suffix}.pdf.assinatura.json"
        data = json.dumps(pdf.signature, indent=1) + "\n"
    return Response(data, media_type="application/json", headers={"Content-Disposition": attachment_header(name)})


@router.get("/autos/{docket_id}/auto.pdf")
def docket_pdf(docket_id: DocketId, user: FileUser, web: State):
    return _stored_pdf(web, user, docket_id, service.pdf_of, "", signature=False)


@router.get("/autos/{docket_id}/auto.pdf.assinatura.json")
def docket_pdf_signature(docket_id: DocketId, user: FileUser, web: State):
    return _stored_pdf(web, user, docket_id, service.pdf_of, "", signature=True)


@router.get("/autos/{docket_id}/julgamento.pdf")
def judgment_pdf(docket_id: DocketId, user: FileUser, web: State):
    """The judgment of the defence as the act that recorded it stored and signed it, byte for
    byte (never rendered again: what was decided is what is downloaded)."""
    return _stored_pdf(web, user, docket_id, service.judgment_pdf_of, "-julgamento", signature=False)


@router.get("/autos/{docket_id}/julgamento.pdf.assinatura.json")
def judgment_pdf_signature(docket_id: DocketId, user: FileUser, web: State):
    return _stored_pdf(web, user, docket_id, service.judgment_pdf_of, "-julgamento", signature=True)


@router.get("/autos/{docket_id}/julgamento-recurso.pdf")
def appeal_pdf(docket_id: DocketId, user: FileUser, web: State):
    """The judgment of the recurso as the act that recorded it stored and signed it."""
    return _stored_pdf(web, user, docket_id, service.appeal_pdf_of, "-julgamento-recurso", signature=False)


@router.get("/autos/{docket_id}/julgamento-recurso.pdf.assinatura.json")
def appeal_pdf_signature(docket_id: DocketId, user: FileUser, web: State):
    return _stored_pdf(web, user, docket_id, service.appeal_pdf_of, "-julgamento-recurso", signature=True)


def judgment_renderer(web: AppState, session):
    """The `judgment_renderer` of `service.perform(JulgarDefesa | JulgarRecurso)`: the judgment
    as a document, the decision and its grounds, the defence (or the recurso, after the
    judgment it appealed), and the readings the defence disputed with the auto re-judged
    without them, as they stand in the act (rendered there once, then kept)."""
    config = web.config

    def render(docket: Docket, action: workflow.JulgarDefesa | workflow.JulgarRecurso, judge: service.Actor
               ) -> bytes:
        from dockets.document import render_judgment_pdf

        entries = service.history(session, judge, docket.id)
        names = views.actor_names(session, entries)
        attachments = views.attachment_views(session, docket.id, web.tz)
        operator = session.get(Operator, docket.operator_id)
        disputed = views.disputes_context(session, docket, actor=judge, calendar=config.calendar,
                                          today=web.today(), tz=web.tz, bundle=None)
        appeal = isinstance(action, workflow.JulgarRecurso)
        if appeal:
            decision = ("Recurso provido: o auto é arquivado" if action.provido
                        else "Recurso não provido: a multa é mantida")
        else:
            decision = ("Auto julgado procedente: a multa é mantida" if action.procedente
                        else "Auto julgado improcedente: o processo é arquivado")
        return render_judgment_pdf(
            docket, issuer_name=config.issuer_name, operator_name=operator.name if operator else docket.operator_id,
            decision=decision, judged_on=date_br(action.on),
            judge=judge.name or ROLE_LABELS.get(judge.role, judge.role),
            fundamentacao=action.fundamentacao,
            defence=views.pleading(entries, attachments, workflow.InterporRecurso if appeal
                                   else workflow.ApresentarDefesa, names),
            marks=disputed["marks"], rejudgment=disputed["rejudgment"],
            appeal=appeal, earlier=_defence_judgment(entries, names) if appeal else None)

    return render


def _defence_judgment(entries, names) -> str | None:
    """The judgment of the defence a recurso appeals, in words; None under a law without a
    defence stage (the recurso appeals the auto itself)."""
    judged = next((e for e in reversed(entries) if e.action == workflow.JulgarDefesa.__name__), None)
    if judged is None:
        return None
    action = judged.payload["action"]
    who = names.get(judged.actor_id) or ROLE_LABELS.get(judged.actor_role, judged.actor_role)
    outcome = "procedente" if action["procedente"] else "improcedente"
    return f"Auto julgado {outcome} em {date_br(dt.date.fromisoformat(action['on']))}, por {who}."


@router.get("/autos/{docket_id}/evidencias.zip")
def docket_bundle(docket_id: DocketId, user: FileUser, web: State):
    config = web.config
    with config.sessions() as session:
        bundle = service.bundle_of(session, user.actor, docket_id)
        data, digest = bundle.data, bundle.sha256
        name = f"{session.get(Docket, docket_id).file_stem}-evidencias.zip"
    return Response(data, media_type="application/zip",
                    headers={"Content-Disposition": attachment_header(name),
                             "X-Evidence-SHA256": digest})


@router.get("/autos/{docket_id}/graficos/{kind}.png")
def docket_chart(docket_id: DocketId, kind: str, user: FileUser, web: State):
    config = web.config
    with config.sessions() as session:
        docket = service.get_docket(session, user.actor, docket_id)
        if kind not in PDF_CHART_KINDS:
            raise NotFound("Gráfico não encontrado.")
        bundle = service.bundle_of(session, user.actor, docket.id)
        png = web.chart_png(docket, bundle, kind)
    if png is None:
        raise NotFound("Este auto não tem este gráfico.")
    return Response(png, media_type="image/png")


@router.get("/autos/{docket_id}/anexos/{attachment_id}")
def docket_attachment(docket_id: DocketId, attachment_id: DocketId, user: FileUser, web: State):
    config = web.config
    with config.sessions() as session:
        docket = service.get_docket(session, user.actor, docket_id)
        try:
            attachment = service.attachment_of(session, user.actor, attachment_id)
        except NotFound:
            attachment = None
        if attachment is None or attachment.docket_id != docket.id:
            raise NotFound("Anexo não encontrado.")
        data, content_type, filename = attachment.data, attachment.content_type, attachment.filename
    return Response(data, media_type=content_type,
                    headers={"Content-Disposition": attachment_header(filename),
                             "Content-Security-Policy": "default-src 'none'; sandbox"})


@router.post("/autos/{docket_id}/acoes/{slug}")
async def docket_action(request: Request, docket_id: DocketId, slug: str, web: State):
    principal, fields, uploads = await read_post(request)
    try:
        await run_in_threadpool(perform, web, principal, docket_id, slug, fields, uploads)
    except (UploadRefused, FormError) as exc:
        spec = ACTION_FORMS.get(slug)
        if spec is None or not spec.takes_files or fields.get("registro_tardio"):
            raise
        # nothing was registered (perform's transaction rolled back): the form again, as typed
        text = str(fields.get("texto") or "")
        if isinstance(exc, UploadRefused):
            refused = RefusedPleading(slug, spec.kind, "Arquivo recusado",
                                      upload_refusal(exc, web.config.max_upload_bytes), text)
            status = exc.status
        else:
            refused = RefusedPleading(slug, spec.kind, "Corrija o formulário", exc.message, text)
            status = 400
        page = await run_in_threadpool(docket_page_response, web, request, principal, docket_id,
                                       refused=refused, status=status)
        if page is None:
            raise
        return page
    return RedirectResponse(f"/autos/{docket_id}?feito={slug}", status_code=303)


def perform(web: AppState, principal: auth.Principal, docket_id: int, slug: str, fields: dict[str, str],
             uploads: list[Upload]) -> None:
    """One action on a docket. The order of the checks matters: first whether the user may
    see the docket at all (404, as for a nonexistent one), then the role (403), then the form."""
    config = web.config
    actor = principal.actor
    with config.sessions.begin() as session:
        docket = service.get_docket(session, actor, docket_id)
        spec = ACTION_FORMS.get(slug)
        if spec is None:
            raise NotFound("Página não encontrada.")
        late = late_registration(fields, today=web.today(), not_before=docket.service_date)
        if late is not None:
            if actor.role != "gestor" or spec.kind not in workflow.PAPER_ACTS:
                raise Forbidden("Somente o gestor registra tardiamente um ato feito em papel (defesa, recurso, "
                                "ciência, pagamento).")
        elif spec.kind not in workflow.ROLE_ACTIONS.get(actor.role, frozenset()):
            raise Forbidden(f"O perfil {ROLE_LABELS.get(actor.role, actor.role).lower()} não pode "
                            f"{workflow.ACTION_LABELS[spec.kind].lower()}.")
        action, note = build_action(spec, fields, today=web.today(), late=late)
        files = []
        if spec.takes_files:
            if len(uploads) > MAX_FILES:
                raise FormError(f"No máximo {MAX_FILES} anexos por envio.")
            files = [check_upload(u, allowed=config.allowed_upload_types, max_bytes=config.max_upload_bytes)
                     for u in uploads]
        renderer = None
        if isinstance(action, workflow.Lavrar):
            operator = session.get(Operator, docket.operator_id)

            def renderer(lavrado: Docket, bundle: bytes | None, audit_head) -> bytes:
                from dockets import document

                return document.render_pdf(lavrado, bundle, calendar=config.calendar, issuer_name=config.issuer_name,
                                           audit_head=audit_head, fiscal_name=principal.full_name,
                                           fiscal_registration=principal.registration,
                                           operator_name=operator.name if operator else None)

        service.perform(session, actor, docket.id, action, config.calendar, note=note, attachments=files,
                        renderer=renderer, judgment_renderer=judgment_renderer(web, session),
                        signer=config.signer, late_registration=late is not None)


MARKS_SLUG = "leituras-contestadas"


@router.post("/autos/{docket_id}/leituras-contestadas")
async def docket_marks(request: Request, docket_id: DocketId, web: State):
    """The defence marks readings of its evidence as disputed; the auto is re-judged without
    them (seconds of CPU, off the event loop) and the page shows the result."""
    principal, fields, _ = await read_post(request)
    try:
        await run_in_threadpool(mark, web, principal, docket_id, fields)
    except disputes.MarkRefused as exc:
        # nothing was registered: the form again, as typed
        page = await run_in_threadpool(docket_page_response, web, request, principal, docket_id,
                                       refused_marks=RefusedMarks(str(exc), fields), status=400)
        if page is None:
            raise
        return page
    return RedirectResponse(f"/autos/{docket_id}?feito={MARKS_SLUG}#contestadas", status_code=303)


def mark(web: AppState, principal: auth.Principal, docket_id: int, fields: dict[str, str]) -> None:
    """Parse the marks form and hand it to the service (which checks who, when, and what);
    who and when first, as for any act (404, 403), then the form."""
    with web.config.sessions.begin() as session:
        disputes.check_may_mark(session, principal.actor, docket_id, web.config.calendar, web.today())
        marks = _marks_typed(fields, web.tz.key)
        disputes.mark_readings(session, principal.actor, docket_id, marks, web.config.calendar, web.today(),
                               web.tz)


def _marks_typed(fields: dict[str, str], timezone: str) -> disputes.Marks:
    lines = disputes.parse_line_values([v for v in fields.get("leituras", "").split(",") if v])
    typed = [fields.get(name, "").strip() for name in ("veiculo", "inicio", "fim")]
    spans = ()
    if any(typed[1:]):
        vehicle, start, end = typed
        if not all(typed):
            raise disputes.MarkRefused("Para contestar um intervalo, informe o veículo, o início e o fim.")
        source = fields.get("fonte", "tachograph")
        try:
            spans = (parse_span(f"{source}:{vehicle}", start, end, timezone),)
        except DisputeError as exc:
            raise disputes.MarkRefused(f"{exc}.") from None
    return disputes.Marks(lines=lines, spans=spans, reason=fields.get("motivo", ""))
