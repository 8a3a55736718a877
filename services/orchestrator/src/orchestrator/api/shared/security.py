"""Who may call the API: the Host allow-list, CORS, bearer tokens, and the startup check.

The API answers only to the names in the allow-list (Starlette's TrustedHostMiddleware), so a
web page that rebinds its own DNS name to 127.0.0.1 is refused before any route runs. Browsers
may call it cross-origin only from ``ORCHESTRATOR_CORS_ORIGINS``. With tokens configured, every
endpoint but the health probes and the web UI's page and files (no data; the page asks for the
token) needs ``Authorization: Bearer <token>`` (or the ``quarry_token`` cookie, for browser
features that cannot set headers). Refusals are problem+json.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
from collections.abc import Callable, Sequence
from http.cookies import CookieError, SimpleCookie
from pathlib import Path

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.api.shared.problems import send_problem
from orchestrator.config import Settings, is_loopback
from orchestrator.core.errors import DomainError, ErrorKind
from orchestrator.core.principals import (
    LOCAL,
    Credential,
    Principal,
    PrincipalError,
    consistent,
    from_file_line,
    from_setting,
    unnamed_id,
)

logger = logging.getLogger(__name__)

#: The cookie the web UI may set instead of sending the Authorization header.
TOKEN_COOKIE = "quarry_token"  # noqa: S105 (a cookie name, not a secret)
#: Paths that never need a token: container and supervisor health probes.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
#: Where the caller's identity for rate limits is kept (``request.state.quarry_client``).
CLIENT_KEY = "quarry_client"
#: Where the caller's principal is kept (``request.state.quarry_principal``): see principal_of.
PRINCIPAL_KEY = "quarry_principal"
# A token shorter than this is guessable; refuse to start with it.
MIN_TOKEN_CHARS = 16
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_WILDCARD_BINDS = ("0.0.0.0", "::", "[::]")


class ConfigError(Exception):
    """A security setting that stops the service at start (one line, exit 2)."""


def load_tokens(settings: Settings) -> tuple[Credential, ...]:
    """The bearer tokens and their principals, from ``ORCHESTRATOR_API_TOKENS``,
    ``ORCHESTRATOR_ADMIN_TOKENS`` and ``ORCHESTRATOR_API_TOKEN_FILE`` (see
    orchestrator.core.principals).

    The settings take ``token`` or ``name:token`` entries; the file holds one ``token``,
    ``name token`` or ``name role token`` per line; blank lines and ``#`` comments are ignored.

    Raises:
        ConfigError: the file cannot be read or holds no token, a token is too short, or the
            principals are inconsistent (one token for two names, one name with two roles).
    """
    try:
        found = from_setting(settings.api_tokens, "user")
        found += from_setting(settings.admin_tokens, "admin")
        if settings.api_token_file:
            found += _from_file(settings.api_token_file)
        credentials = consistent(found)
    except PrincipalError as err:
        raise ConfigError(str(err)) from None
    if any(len(c.token) < MIN_TOKEN_CHARS for c in credentials):
        raise ConfigError(f"every API token must have at least {MIN_TOKEN_CHARS} characters")
    return credentials


def _from_file(path: str) -> list[Credential]:
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"ORCHESTRATOR_API_TOKEN_FILE: cannot read {path} ({err})") from None
    lines = enumerate(text.splitlines(), 1)
    found = [from_file_line(line, f"ORCHESTRATOR_API_TOKEN_FILE line {n}") for n, line in lines]
    credentials = [c for c in found if c is not None]
    if not credentials:
        raise ConfigError(f"ORCHESTRATOR_API_TOKEN_FILE: {path} is empty")
    return credentials


def check_bind(settings: Settings, tokens: Sequence[object]) -> None:
    """Refuse a non-loopback bind without tokens: anyone on the network could use the API.

    Raises:
        ConfigError: the bind address is not loopback, no token is set, and the insecure
            override is off.
    """
    if tokens or is_loopback(settings.host) or settings.insecure_no_auth:
        return
    raise ConfigError(
        f"ORCHESTRATOR_HOST={settings.host} is not a loopback address: set "
        "ORCHESTRATOR_API_TOKENS or ORCHESTRATOR_API_TOKEN_FILE (or "
        "ORCHESTRATOR_INSECURE_NO_AUTH=true when something else keeps strangers out)"
    )


def allowed_hosts(settings: Settings) -> list[str]:
    """Host names the API answers to: loopback names, the bind address, and the configured ones."""
    names = list(_LOOPBACK_NAMES)
    host = settings.host.strip()
    if host and host not in _WILDCARD_BINDS:
        try:
            is_v6 = ipaddress.ip_address(host.strip("[]")).version == 6
        except ValueError:
            is_v6 = False
        names.append(f"[{host.strip('[]')}]" if is_v6 else host)
    names += [h.strip() for h in settings.allowed_hosts.split(",") if h.strip()]
    return list(dict.fromkeys(n.lower() for n in names))


class HostGuard:
    """TrustedHostMiddleware's check, with a problem+json refusal instead of plain text."""

    def __init__(self, app: ASGIApp, *, hosts: list[str]) -> None:
        self.app = app
        self._check = TrustedHostMiddleware(self._passed, allowed_hosts=hosts, www_redirect=False)

    async def _passed(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})["host_ok"] = True
        await self.app(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = False

        async def refuse(message: Message) -> None:
            # Reached only when the middleware did not pass the request on: replace its
            # plain-text 400 with a problem and drop its body.
            nonlocal refused
            if scope.get("state", {}).get("host_ok"):
                await send(message)
                return
            if not refused:
                refused = True
                host = Headers(scope=scope).get("host", "")
                logger.warning("refused request for an unknown host", extra={"host": host[:200]})
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                detail = "The Host header names a host this server does not answer to."
                await send_problem(send, 400, detail, scope.get("path", ""), [])

        await self._check(scope, receive, refuse)


def is_preflight(scope: Scope) -> bool:
    """A CORS preflight: OPTIONS with an Origin and Access-Control-Request-Method."""
    if scope["type"] != "http" or scope.get("method") != "OPTIONS":
        return False
    headers = Headers(scope=scope)
    return "origin" in headers and "access-control-request-method" in headers


class PreflightGuard:
    """Every refused CORS preflight is a 400 problem: from an origin not allowed (also when no
    origin is, where no CORS middleware runs and the preflight met the token check's 401 or the
    router's 405), or for a method or header the CORS middleware refuses (its plain text)."""

    def __init__(self, app: ASGIApp, *, origins: list[str]) -> None:
        self.app = app
        self._origins = frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_preflight(scope):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if "*" not in self._origins and Headers(scope=scope)["origin"] not in self._origins:
            detail = "Cross-origin requests from this origin are not allowed (CORS)."
            await send_problem(send, 400, detail, path, [])
            return
        refused = False

        async def as_problem(message: Message) -> None:
            # CORSMiddleware answers a disallowed method or header with a plain-text 400.
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 400:
                refused = True
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() == b"vary"]
                detail = "The preflight asks for a method or header this API does not allow."
                await send_problem(send, 400, detail, path, headers)
            elif not refused:
                await send(message)

        await self.app(scope, receive, as_problem)


class TokenAuth:
    """Bearer-token check for every path but the health probes and the web UI's own files
    (``public_path``: the web face says which, so this shared check knows no face); it also
    records the caller's principal (everyone is the local admin when no token is configured)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        tokens: Sequence[str | Credential],
        public_path: Callable[[str], bool],
    ) -> None:
        self.app = app
        self._public_path = public_path
        # Compared as digests: equal lengths, so compare_digest's time says nothing of length.
        self._known = [
            (hashlib.sha256(c.token.encode()).digest(), c.principal)
            for c in map(_credential, tokens)
        ]

    def _match(self, token: str) -> tuple[bytes, Principal] | None:
        digest = hashlib.sha256(token.encode()).digest()
        found = None
        for known, principal in self._known:  # no early exit: every token is compared each time
            if hmac.compare_digest(digest, known):
                found = (known, principal)
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        path = scope.get("path", "")
        if not self._known:
            state[PRINCIPAL_KEY] = LOCAL
            await self.app(scope, receive, send)
            return
        if path in OPEN_PATHS or self._public_path(path):
            await self.app(scope, receive, send)
            return
        token = presented_token(Headers(scope=scope))
        match = self._match(token) if token else None
        if match is None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await self._refuse(send, scope.get("path", ""), bool(token))
            return
        known, state[PRINCIPAL_KEY] = match
        # Rate limits count per token; a short digest prefix names it without revealing it.
        state[CLIENT_KEY] = "token:" + known.hex()[:16]
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(send: Send, path: str, presented: bool) -> None:
        challenge = 'Bearer realm="quarry"' + (', error="invalid_token"' if presented else "")
        detail = (
            "The bearer token is not valid."
            if presented
            else "This server needs a bearer token: send Authorization: Bearer <token>."
        )
        headers = [(b"www-authenticate", challenge.encode())]
        await send_problem(send, 401, detail, path, headers, title="Unauthorized")


def presented_token(headers: Headers) -> str:
    """The token from ``Authorization: Bearer …`` or else the ``quarry_token`` cookie."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    raw = headers.get("cookie", "")
    if not raw:
        return ""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return ""
    morsel = jar.get(TOKEN_COOKIE)
    return morsel.value if morsel is not None else ""


def install_security(
    app: FastAPI,
    settings: Settings,
    tokens: Sequence[str | Credential],
    *,
    public_path: Callable[[str], bool],
) -> None:
    """Add the auth, CORS and Host middlewares (call after the app's other middlewares);
    ``public_path`` names the paths that load without a token (the web UI's page and files).

    Starlette runs the last added outermost: Host first (a rebinding request learns nothing),
    then the preflight guard and CORS (a preflight carries no token), then the token check.
    """
    app.add_middleware(TokenAuth, tokens=tokens, public_path=public_path)
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Accept"],
            max_age=600,
        )
    app.add_middleware(PreflightGuard, origins=origins)
    app.add_middleware(HostGuard, hosts=allowed_hosts(settings))


def _credential(token: str | Credential) -> Credential:
    # A bare token (tests, callers from before principals) is an unnamed user, as in the settings.
    if isinstance(token, Credential):
        return token
    return Credential(token, Principal(unnamed_id(token)))


class NotAuthenticated(DomainError):
    """A data route reached without a principal (it never passed the token check)."""

    kind = ErrorKind.UNAUTHENTICATED
    title = "Unauthorized"


def principal_of(scope_state: object) -> Principal:
    """The principal the token check recorded for this request (``request.state``).

    Raises:
        NotAuthenticated: none was recorded: the request did not pass the token check, so it
            may see nothing (fail closed rather than fall back to a default owner).
    """
    found = getattr(scope_state, PRINCIPAL_KEY, None)
    if not isinstance(found, Principal):
        raise NotAuthenticated("This request carries no identity; send a bearer token.")
    return found
