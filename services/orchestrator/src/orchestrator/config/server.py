"""The HTTP server: access control (hosts, CORS, tokens), rate limits and request bounds."""

from __future__ import annotations

from limits import parse_many
from pydantic import BaseModel, Field, field_validator


class ServerSettings(BaseModel):
    """Access control and HTTP bounds (orchestrator/api/http/security.py, ratelimit.py,
    server.py); a part of ``Settings``."""

    # Host names (besides localhost, 127.0.0.1, [::1] and the bind address) the API answers to;
    # anything else is a DNS-rebinding attempt. Comma-separated; "*.example.com" allowed.
    allowed_hosts: str = ""
    # Origins a browser may call the API from (CORS); empty: no cross-origin access at all.
    cors_origins: str = ""
    # Bearer tokens (comma-separated) and/or a file holding one token per line. Kept out of repr.
    api_tokens: str = Field(default="", repr=False)
    api_token_file: str = ""
    # Tokens of admins, who see and act on every principal's data (orchestrator/core/principals.py).
    admin_tokens: str = Field(default="", repr=False)
    # Allow a non-loopback bind without tokens (only where something else keeps strangers out,
    # e.g. compose publishing the port on 127.0.0.1 only).
    insecure_no_auth: bool = False
    # Rate limits per client (token, else address) and endpoint family, in the `limits`
    # package's notation ("10/minute", "10/minute;100/day"), "off", or "auto": sized for one
    # person's UI, API clients and scripts without API tokens, tighter per token when tokens
    # are set (the profiles are in api/http/ratelimit.py).
    rate_questions: str = "auto"
    rate_research: str = "auto"
    rate_indexing: str = "auto"
    # A `rate_limit_near` warning once a client has used this share of a limit.
    rate_warn_at: float = Field(default=0.8, gt=0, le=1)
    # SSE / NDJSON streams send a keep-alive comment after this long without an event.
    keepalive_s: float = Field(default=15.0, gt=0, le=300)
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    # HTTP server bounds: request line + headers size, time to send them, connections per client.
    max_header_bytes: int = Field(default=64 * 1024, ge=4096, le=16 * 1024 * 1024)
    header_timeout_s: float = Field(default=10.0, gt=0, le=300)
    max_client_connections: int = Field(default=32, ge=1, le=10_000)
    # Time to send a request body once its head has arrived (a 64 KiB body takes well under a
    # second even on a slow link); a body trickled slower is answered 408 and closed.
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    # /readyz gives each dependency's probe this long.
    ready_timeout_s: float = Field(default=2.0, gt=0, le=30)

    @field_validator("rate_questions", "rate_research", "rate_indexing")
    @classmethod
    def _rate(cls, value: str) -> str:
        if value.strip().lower() not in ("off", "auto"):
            parse_many(value)  # raises ValueError with the library's message
        return value.strip()
