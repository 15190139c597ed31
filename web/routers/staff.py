"""The Órgão Gerencial's own pages: occurrences (motivo justificado), the audit record's
check and infractions a fiscal registers by hand."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from dockets import audit as audit_log
from dockets import service
from dockets.service import Forbidden
from web import auth, fiscal
from web.dependencies import FileUser, PageUser, State, attachment_header, read_post, require_staff
from web.errors import upload_refusal
from web.format import datetime_br
from web.forms import FormError
from web.security import MAX_FILES, UploadRefused, check_upload
from web.state import AppState

router = APIRouter()


def occurrences_page(web: AppState, request: Request, user: auth.Principal, *, status: int = 200) -> HTMLResponse:
    config = web.config
    with config.sessions() as session:
        occurrences = fiscal.list_occurrences(session, user.actor)
        rows = [{"id": o.id, "kind": fiscal.OCCURRENCE_KINDS.get(o.kind, o.kind),
                 "start": datetime_br(o.start, web.tz), "end": datetime_br(o.end, web.tz),
                 "route_id": o.route_id or "—", "vehicle_id": o.vehicle_id or "—", "note": o.note or "",
                 "geometry": o.geometry is not None} for o in occurrences]
    return web.render(request, "ocorrencias.html", {"rows": rows, "kinds": fiscal.OCCURRENCE_KINDS,
                                                    "itineraries": web.itineraries()}, status)


@router.get("/ocorrencias", response_class=HTMLResponse)
def occurrences(request: Request, user: PageUser, web: State):
    require_staff(user)
    return occurrences_page(web, request, user)


@router.get("/ocorrencias.jsonl")
def occurrences_export(user: FileUser, web: State):
    config = web.config
    require_staff(user)
    with config.sessions() as session:
        lines = [json.dumps(fiscal.occurrence_record(o, web.tz), ensure_ascii=False)
                 for o in reversed(fiscal.list_occurrences(session, user.actor, limit=100_000))]
    return Response("".join(line + "\n" for line in lines), media_type="application/x-ndjson",
                    headers={"Content-Disposition": attachment_header("occurrences.jsonl")})


@router.post("/ocorrencias")
async def register_occurrence(request: Request, web: State):
    config = web.config
    principal, fields, _ = await read_post(request)
    require_staff(principal, fiscal_only=True)

    def register():
        with config.sessions.begin() as session:
            fiscal.occurrence_from_form(session, principal.actor, fields, web.tz, web.now())

    await run_in_threadpool(register)
    return RedirectResponse("/ocorrencias", status_code=303)


@router.get("/auditoria", response_class=HTMLResponse)
async def audit_page(request: Request, user: PageUser, web: State):
    config = web.config
    if user.role != "gestor":
        raise Forbidden("Somente o gestor confere o registro de auditoria.")

    def check() -> dict:
        # the same check as `fiscaliza audit verify` and the docket sink's on start
        if not config.audit_keys or config.anchors is None:
            return {"error": "O servidor foi iniciado sem a chave de auditoria ou sem as âncoras."}
        try:
            anchors = config.anchors.read()
            with config.sessions() as session:
                report = audit_log.verify_record(session, config.audit_keys, anchors)
        except audit_log.AuditError as exc:
            return {"error": str(exc)}
        return {"report": report, "destination": config.anchors.describe()}

    result = await run_in_threadpool(check)
    return web.render(request, "auditoria.html", result, 200 if "report" in result else 409)


@router.get("/infracoes/nova", response_class=HTMLResponse)
def manual_form(request: Request, user: PageUser, web: State):
    require_staff(user, fiscal_only=True)
    return manual_form_page(web, request)


def manual_form_page(web: AppState, request: Request, *, values: dict[str, str] | None = None,
                     refusal: str | None = None, status: int = 200) -> HTMLResponse:
    """The fiscal's form; after a refusal, the reason and what was typed (files must be
    chosen again: a browser never lets a page fill them in)."""
    config = web.config
    with config.sessions() as session:
        operators = sorted(service.operator_names(session).items())
    pack = config.pack
    codes = [(code, pack.law.articles[code]) for code in fiscal.manual_codes(pack)]
    vehicles = sorted(config.fleet.values(), key=lambda v: (v.operator_id, v.vehicle_id))
    now_local = web.now().astimezone(web.tz).strftime("%Y-%m-%dT%H:%M")
    return web.render(request, "infracao_nova.html", {"codes": codes, "operators": operators,
                                                      "vehicles": vehicles, "now_local": now_local,
                                                      "fine_unit": pack.law.fine_unit, "law_title": pack.law.title,
                                                      "max_files": MAX_FILES,
                                                      "max_upload_mib": config.max_upload_bytes // (1024 * 1024) or 1,
                                                      "values": values or {}, "refusal": refusal}, status)


@router.post("/infracoes/nova")
async def manual_create(request: Request, web: State):
    config = web.config
    principal, fields, uploads = await read_post(request)
    require_staff(principal, fiscal_only=True)
    try:
        if len(uploads) > MAX_FILES:
            raise FormError(f"No máximo {MAX_FILES} anexos por registro.")
        # photos and documents of what the fiscal saw: checked and stored as a defence's attachments
        files = [check_upload(u, allowed=config.allowed_upload_types, max_bytes=config.max_upload_bytes)
                 for u in uploads]
        docket_id = await run_in_threadpool(create_manual, web, principal, fields, files)
    except UploadRefused as exc:  # nothing registered: the form again, as typed, the reason beside it
        return await run_in_threadpool(lambda: manual_form_page(
            web, request, values=fields, status=exc.status,
            refusal=f"Arquivo recusado. {upload_refusal(exc, config.max_upload_bytes)}"))
    except FormError as exc:
        return await run_in_threadpool(lambda: manual_form_page(web, request, values=fields, status=400,
                                                                refusal=exc.message))
    return RedirectResponse(f"/autos/{docket_id}", status_code=303)


def create_manual(web: AppState, principal: auth.Principal, fields: dict[str, str],
                  files: list[tuple[str, str, bytes]]) -> int:
    config = web.config
    with config.sessions.begin() as session:
        docket = fiscal.manual_from_form(session, principal.actor, fields, pack=config.pack, tz=web.tz, now=web.now(),
                                         fleet=config.fleet, ufir_brl=config.ufir_brl,
                                         registration=principal.registration, attachments=files,
                                         signer=config.signer)
        return docket.id
