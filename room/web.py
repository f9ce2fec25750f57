"""`paigow review`: the surveillance room's web UI (FastAPI, server-rendered Jinja2).

Pages: a live alert board (new alerts arrive by server-sent events, no reload), the incident
list with filters, each incident with its evidence, the hands drawn as tiles, the round's
timeline and the rule-book clause, and acknowledge / escalate / dismiss with a note; the audit
log. Login with roles (viewer, reviewer, admin); every form carries a CSRF token.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import json
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.middleware.sessions import SessionMiddleware

from room.report import shift_report_html
from room.store import ACTIONS, STATUSES, AlertRow, Store, StoreError
from room.tiles import facts_html
from rules import CATALOGUE, Irregularity
from rules.clauses import clause_texts

TEMPLATES = Path(__file__).parent / "templates"
CAN_ACT = ("reviewer", "admin")
SESSION_MAX_AGE_S = 12 * 3600
"""A login lasts a shift and a half: nobody is asked to log in again mid-shift."""
FAILED_LOGINS_ALLOWED = 5
"""Wrong passwords for one user within `FAILED_LOGINS_WINDOW_S` before further tries are refused
unchecked: enough for typing slips, far too few to guess an argon2id-hashed password."""
FAILED_LOGINS_WINDOW_S = 15 * 60
"""How long failed logins count against a user: a person locked out waits a coffee break."""
ADDRESS_FAILED_LOGINS_ALLOWED = 20
"""Wrong passwords from one address (any user names) within the window before that address is
refused: one guesser trying many names stops here, while a surveillance room whose operators
share one address still has room for each one's slips."""
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' "
    "'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'; "
    "form-action 'self'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
"""Sent with every page: no framing (click-jacking), no sniffing, nothing loaded from elsewhere
(the pages are server-rendered with their scripts and styles inline)."""
HSTS = "max-age=31536000"
LARGEST_SERIAL = 2**63 - 1
"""The largest alert serial a database stores (a 64-bit integer)."""


class LoginRequiredError(Exception):
    pass


def create_app(
    store: Store,
    secret: str,
    *,
    poll_s: float = 0.5,
    tables_every_s: float = 5.0,
    secure_cookie: bool = True,
) -> FastAPI:
    """The review UI. `secure_cookie` (the default) sends the session cookie over HTTPS only and
    asks browsers to keep to HTTPS; only a demo on the loopback address turns it off."""
    app = FastAPI(title="paigow surveillance room", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret,
        same_site="strict",
        session_cookie="paigow_session",
        max_age=SESSION_MAX_AGE_S,
        https_only=secure_cookie,
    )

    @app.middleware("http")
    async def _headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        if secure_cookie:
            response.headers["Strict-Transport-Security"] = HSTS
        return response

    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.filters["facts"] = lambda text: Markup(facts_html(text))
    templates.env.filters["when"] = lambda ts: dt.datetime.fromtimestamp(ts).strftime(
        "%Y-%m-%d %H:%M:%S"
    )

    def user(request: Request) -> dict[str, str]:
        """The logged-in user as the store knows them now (a closed session or a changed role
        counts at once, whatever the cookie says). Looked up once a request."""
        known: dict[str, str] | None = getattr(request.state, "user", None)
        if known is not None:
            return known
        token = request.session.get("sid")
        found = store.session_user(token, SESSION_MAX_AGE_S) if isinstance(token, str) else None
        if found is None:
            request.session.pop("sid", None)
            raise LoginRequiredError
        request.state.user = {"name": found[0], "role": found[1]}
        return dict(request.state.user)

    def current(request: Request) -> dict[str, str] | None:
        try:
            return user(request)
        except LoginRequiredError:
            return None

    def csrf(request: Request) -> str:
        token = request.session.get("csrf")
        if not token:
            token = request.session["csrf"] = secrets.token_urlsafe(32)
        return str(token)

    def check_csrf(request: Request, token: str) -> None:
        if not secrets.compare_digest(token, str(request.session.get("csrf", ""))):
            raise HTTPException(403, "the form expired or came from elsewhere: reload the page")

    def page(request: Request, name: str, **context: Any) -> HTMLResponse:
        return templates.TemplateResponse(
            request,
            name,
            {
                "user": current(request),
                "csrf": csrf(request),
                **context,
            },
        )

    @app.exception_handler(LoginRequiredError)
    async def _login_first(request: Request, exc: LoginRequiredError) -> Response:
        if request.url.path.startswith(("/events", "/evidence", "/clips", "/tables")):
            return Response("log in first", status_code=401)
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str = "/", failed: int = 0) -> HTMLResponse:
        return page(request, "login.html", next=local_path(next), failed=bool(failed))

    @app.post("/login")
    def login(
        request: Request,
        username: str = Form(...),
        password: str = Form(...),
        token: str = Form(..., alias="csrf"),
        next: str = Form("/"),
    ) -> Response:
        check_csrf(request, token)
        address = request.client.host if request.client else "unknown"
        window = FAILED_LOGINS_WINDOW_S
        by_user = store.failed_logins(window, username=username)
        by_address = store.failed_logins(window, address=address)
        if by_user >= FAILED_LOGINS_ALLOWED or by_address >= ADDRESS_FAILED_LOGINS_ALLOWED:
            who = "this user" if by_user >= FAILED_LOGINS_ALLOWED else "this address"
            raise HTTPException(
                429, f"too many wrong passwords for {who}: try again in {window // 60} minutes"
            )
        role = store.check_login(username, password)
        if role is None:
            store.record(username[:64], "login-failed", f"from {address}")
            if by_user + 1 == FAILED_LOGINS_ALLOWED:  # the lockout, audited once
                store.record(username[:64], "login-locked", f"this user, from {address}")
            if by_address + 1 == ADDRESS_FAILED_LOGINS_ALLOWED:
                store.record(username[:64], "login-locked", f"address {address}")
            return RedirectResponse("/login?failed=1", status_code=303)
        store.record(username, "login")
        request.session.clear()  # a new session on login
        request.session["sid"] = store.open_session(username)
        return RedirectResponse(local_path(next), status_code=303)

    @app.post("/logout")
    def logout(request: Request, token: str = Form(..., alias="csrf")) -> Response:
        check_csrf(request, token)
        sid = request.session.get("sid")
        if isinstance(sid, str):
            store.close_session(sid)  # a copy of the cookie is worth nothing from now on
        request.session.clear()
        return RedirectResponse("/login", status_code=303)

    @app.get("/", response_class=HTMLResponse)
    def board(request: Request) -> HTMLResponse:
        user(request)
        alerts = store.alerts(limit=50)
        last = max((a.serial for a in alerts), default=0)
        every_ms = int(tables_every_s * 1000)
        return page(request, "board.html", alerts=alerts, last=last,
                    tables=store.table_conditions(), tables_every_ms=every_ms)  # fmt: skip

    @app.get("/tables")
    def tables(request: Request) -> list[dict[str, str]]:
        """Each table's condition, worst first, for the live board to refresh."""
        user(request)
        return [dataclasses.asdict(c) for c in store.table_conditions()]

    @app.get("/events")
    async def events(
        request: Request, after: int = Query(0, ge=0, le=LARGEST_SERIAL)
    ) -> StreamingResponse:
        user(request)

        async def stream() -> AsyncIterator[str]:
            last = after
            yield "retry: 2000\n\n"
            while not await request.is_disconnected():
                new = await asyncio.to_thread(store.alerts, after_serial=last, limit=100)
                for alert in sorted(new, key=lambda a: a.serial):
                    last = alert.serial
                    yield f"id: {alert.serial}\ndata: {json.dumps(_summary(alert))}\n\n"
                await asyncio.sleep(poll_s)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    @app.get("/incidents", response_class=HTMLResponse)
    def incidents(
        request: Request,
        table: str = "",
        kind: str = "",
        severity: str = "",
        status: str = "",
        day: str = "",
        shift: str = "",
        order: str = "",
    ) -> HTMLResponse:
        user(request)
        since, until = shift_window(day, shift)
        alerts = store.alerts(
            since=since,
            until=until,
            table=table or None,
            kind=kind or None,
            severity=severity or None,
            status=status or None,
            least_sure_first=order == "least-sure",
        )
        filters = {
            "table": table,
            "kind": kind,
            "severity": severity,
            "status": status,
            "day": day,
            "shift": shift,
            "order": order,
        }
        return page(
            request,
            "incidents.html",
            alerts=alerts,
            filters=filters,
            statuses=STATUSES,
            shifts=SHIFTS,
        )

    @app.get("/incidents/{alert_id}", response_class=HTMLResponse)
    def incident(request: Request, alert_id: str) -> HTMLResponse:
        who = user(request)
        try:
            alert = store.alert(alert_id)
        except StoreError:
            raise HTTPException(404, f"no incident {alert_id}") from None
        found = store.round(alert.round_id) if alert.round_id else None
        phases = (
            sorted((found.record.get("phases") or {}).items(), key=lambda p: p[1]) if found else []
        )
        return page(
            request,
            "incident.html",
            alert=alert,
            described=_described(alert),
            clauses=clause_texts(alert.rules, alert.clause),
            round=found,
            phases=phases,
            audit=store.audit(alert_id),
            has_evidence=store.evidence(alert_id) is not None,
            clip=store.clip(alert_id),
            can_act=who["role"] in CAN_ACT,
            actions=list(ACTIONS),
        )

    @app.post("/incidents/{alert_id}/act")
    def act(
        request: Request,
        alert_id: str,
        action: str = Form(...),
        note: str = Form(""),
        token: str = Form(..., alias="csrf"),
    ) -> Response:
        who = user(request)
        check_csrf(request, token)
        if who["role"] not in CAN_ACT:
            raise HTTPException(403, "viewers cannot act on incidents")
        try:
            store.act(alert_id, action, who["name"], note)
        except StoreError as error:
            raise HTTPException(400, str(error)) from None
        return RedirectResponse(f"/incidents/{alert_id}", status_code=303)

    def private(data: bytes | None, media_type: str, what: str) -> Response:
        """A piece of evidence for a logged-in user only, never kept by a shared cache."""
        if not data:
            raise HTTPException(404, f"no {what} (never sent, or past retention)")
        return Response(data, media_type=media_type, headers={"Cache-Control": "private"})

    @app.get("/evidence/{alert_id}.jpg")
    def evidence(request: Request, alert_id: str) -> Response:
        user(request)
        return private(store.evidence(alert_id), "image/jpeg", "evidence image")

    @app.get("/clips/{alert_id}.webm")
    def clip(request: Request, alert_id: str) -> Response:
        user(request)
        found = store.clip(alert_id)
        return private(found.clip_webm if found else None, "video/webm", "clip")

    @app.get("/clips/{alert_id}.jpg")
    def frame(request: Request, alert_id: str) -> Response:
        user(request)
        found = store.clip(alert_id)
        return private(found.frame_jpeg if found else None, "image/jpeg", "whole frame")

    @app.get("/enrolments/{enrolment_id}.jpg")
    def enrolment_picture(request: Request, enrolment_id: str) -> Response:
        """The picture a table's box drew of an opening display it enrolled."""
        user(request)
        return private(store.enrolment_picture(enrolment_id), "image/jpeg", "enrolment picture")

    @app.get("/report", response_class=HTMLResponse)
    def report(request: Request, day: str = "", shift: str = "", table: str = "") -> HTMLResponse:
        """A shift report made on demand: today's whole day unless a day and shift are asked."""
        user(request)
        since, until = shift_window(day or dt.date.today().isoformat(), shift)
        assert since is not None and until is not None
        body = Markup(shift_report_html(store, since, until, table or None))
        filters = {"day": day, "shift": shift, "table": table}
        return page(request, "report.html", body=body, filters=filters, shifts=SHIFTS)

    @app.get("/audit", response_class=HTMLResponse)
    def audit(request: Request) -> HTMLResponse:
        who = user(request)
        if who["role"] not in CAN_ACT:
            raise HTTPException(403, "the audit log is for reviewers and admins")
        return page(request, "audit.html", entries=store.audit(limit=500))

    return app


SHIFTS = {"day": (6, 14), "swing": (14, 22), "night": (22, 30)}


def shift_window(day: str, shift: str) -> tuple[float | None, float | None]:
    """A shift on a day (local time) as a time window; the night shift runs past midnight. A
    shift without a day is today's."""
    if not day and not shift:
        return None, None
    day = day or dt.date.today().isoformat()
    try:
        start = dt.datetime.strptime(day, "%Y-%m-%d")
    except ValueError:
        raise HTTPException(400, f"a day is written YYYY-MM-DD, got {day!r}") from None
    first, last = SHIFTS.get(shift, (0, 24))
    try:
        return (
            (start + dt.timedelta(hours=first)).timestamp(),
            (start + dt.timedelta(hours=last)).timestamp(),
        )
    except (OverflowError, ValueError, OSError):  # 9999-12-31's night shift, 0001-01-01
        raise HTTPException(400, f"no shift on {day} can hold an alert") from None


def local_path(target: str) -> str:
    """Where to go after logging in: a path on this site, never another site
    (`//evil.example/`, `/\\evil.example`, `https://...` all go to the board)."""
    parts = urlsplit(target)
    if (
        not target.startswith("/")
        or target.startswith(("//", "/\\"))
        or parts.scheme
        or parts.netloc
        or any(c in target for c in "\r\n\t")
    ):
        return "/"
    return target


def _described(alert: AlertRow) -> str:
    """The alert's sentence, or for one from a box that sent none, what its kind means."""
    if alert.summary:
        return alert.summary
    with contextlib.suppress(ValueError):
        info = CATALOGUE[Irregularity(alert.kind)]
        where = f"Box {alert.position}: " if alert.position else ""
        return f"{where}{info.description[0].upper()}{info.description[1:]}."
    return alert.observed or alert.kind


def _summary(alert: AlertRow) -> dict[str, Any]:
    return {
        "id": alert.id,
        "serial": alert.serial,
        "kind": alert.kind,
        "severity": alert.severity,
        "confidence": f"{alert.confidence * 100:.0f}%",
        "table": alert.table_id,
        "position": alert.position,
        "observed": alert.observed,
        "summary": alert.summary or alert.observed,
        "status": alert.status,
        "received": dt.datetime.fromtimestamp(alert.received_at).strftime("%Y-%m-%d %H:%M:%S"),
    }
