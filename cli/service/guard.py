"""What guards every request of the HTTP service: bounded bodies holding finite numbers only
(a JSON NaN, Infinity or 1e999 is 422 naming its field before any route reads it), the bearer
token of mutating endpoints, and error handlers that answer 4xx/503 for known failures and a
generic 500 (logged, counted) for anything unexpected."""

from __future__ import annotations

import hmac
import json
import logging
import math
import sqlite3

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ...kg.store import StoreError

log = logging.getLogger("factprobe.service")

MAX_BODY_BYTES = 64 * 1024


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413, and a JSON body holding a
    number no float holds finitely 422 (non_finite_number), before any endpoint sees it.

    Content-Length is checked first; a body without one (chunked) is read up to the limit and
    replayed, so a client cannot stream past it by leaving the header out."""

    def __init__(self, app, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.limit
            except ValueError:
                await _plain(send, 400, "bad Content-Length header")
                return
            if too_big:
                await _plain(send, 413, f"request body over {self.limit} bytes")
                return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await _plain(send, 413, f"request body over {self.limit} bytes")
                return
        found = non_finite_number(body)
        if found is not None:
            await _refused_number(send, *found)
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class _NonFinite:
    """Where a JSON number that no float holds stood (NaN, Infinity, -Infinity, 1e999), as written."""

    def __init__(self, written: str) -> None:
        self.written = written


def _finite_float(text: str):
    number = float(text)
    return number if math.isfinite(number) else _NonFinite(text)


def non_finite_number(body: bytes) -> tuple[list, str] | None:
    """(the JSON path, the text written) of the first number in a JSON body that is not finite
    (Python's json reads NaN, Infinity and 1e999 into floats JSON cannot write back); None when
    there is none or the body is no JSON at all (the route's own validation answers that)."""
    if not body:
        return None
    try:
        value = json.loads(body, parse_constant=_NonFinite, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[list, object]] = [([], value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _NonFinite):
            return path, item.written
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        stack.extend(reversed([([*path, key], child) for key, child in children]))  # the first written first
    return None


async def _refused_number(send, path: list, written: str) -> None:
    """422 naming the field, in the shape of FastAPI's validation errors, the number quoted as text."""
    await _json(send, 422, {"detail": [{"type": "finite_number", "loc": ["body", *path], "input": written,
                                        "msg": f"{written} is not a finite number (JSON numbers only; no NaN or "
                                               "Infinity)"}]})


async def _plain(send, status: int, detail: str) -> None:
    await _json(send, status, {"detail": detail})


async def _json(send, status: int, content: dict) -> None:
    payload = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})


_bearer = HTTPBearer(auto_error=False, description="The token the server was started with (--token-env).")


def check_token(token: str | None, credentials: HTTPAuthorizationCredentials | None) -> None:
    """No configured token means no writes at all (503), never an open server."""
    if not token:
        raise HTTPException(503, "no token configured: start the server with the token variable set")
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise HTTPException(401, "missing bearer token", headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(credentials.credentials.encode(), token.encode()):
        raise HTTPException(401, "wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


def require_token(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> None:
    """The dependency of mutating endpoints: the token of the app's configuration
    (app.state.factprobe.config.token, see state.py)."""
    check_token(request.app.state.factprobe.config.token, credentials)


class ErrorCounter:
    """Unexpected exceptions seen; /health reports it so tests can assert there were none."""

    def __init__(self) -> None:
        self.unexpected = 0


def install_error_handlers(app: FastAPI, counter: ErrorCounter) -> None:
    @app.exception_handler(StoreError)
    async def store_error(request: Request, error: StoreError) -> JSONResponse:
        log.warning("store error on %s: %s", request.url.path, error)
        return JSONResponse({"detail": f"store unavailable: {error}"}, status_code=503)

    @app.exception_handler(sqlite3.Error)
    async def sqlite_error(request: Request, error: sqlite3.Error) -> JSONResponse:
        log.warning("sqlite error on %s: %s", request.url.path, error)
        return JSONResponse({"detail": "store unavailable (database error)"}, status_code=503)

    from ...index.elastic import BackendUnavailable

    @app.exception_handler(BackendUnavailable)
    async def backend_error(request: Request, error: BackendUnavailable) -> JSONResponse:
        log.warning("frequency backend unavailable on %s: %s", request.url.path, error)
        return JSONResponse({"detail": str(error)}, status_code=503)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        counter.unexpected += 1
        log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=error)
        return JSONResponse({"detail": "internal error (logged by the server)"}, status_code=500)
