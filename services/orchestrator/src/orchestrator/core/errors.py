"""The orchestrator's domain errors: what went wrong, in domain terms, with no transport in them.

Each error names its ``kind``; every face maps kinds to its own wire once, at its edge:
``api/http/problems.py`` (``HTTP_STATUS``: RFC 7807 problem+json), ``api/mcp/errors.py`` (a tool
error
whose text the caller reads), the OpenAI-compatible face (its error object via the HTTP table).
A subclass that tries to carry an HTTP status fails at import, so no status drifts back in.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class ErrorKind(StrEnum):
    """Why a request was refused; the faces' status tables are keyed by it."""

    MALFORMED = "malformed"  # the request cannot be read at all (bad syntax, bad header)
    INVALID = "invalid"  # readable, but names something that is not allowed or not there
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    NOT_ACCEPTABLE = "not_acceptable"  # no representation the caller accepts
    CONFLICT = "conflict"  # the resource's state does not allow it now
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"  # a media type or format the server does not take
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"  # this server runs without the capability, or it is down


class DomainError(Exception):
    """A request the orchestrator refuses; ``detail`` is safe to show the caller.

    ``code`` is an optional machine-readable reason (``search_off``, ``outside_roots``);
    ``retry_after_s`` says when a rate-limited or capped request may be tried again.
    """

    kind: ClassVar[ErrorKind] = ErrorKind.MALFORMED
    title: ClassVar[str] = "Bad request"
    code: ClassVar[str | None] = None

    def __init__(self, detail: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retry_after_s = retry_after_s

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "status" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__}: a domain error names its kind, not an HTTP status "
                "(the status table is in orchestrator/api/http/problems.py)"
            )


class SessionNotFound(DomainError):
    """No session with that id (never created, expired or deleted)."""

    kind = ErrorKind.NOT_FOUND
    title = "Session not found"


class InvalidEdit(DomainError):
    """``edit_turn`` names no turn of an existing session."""

    kind = ErrorKind.INVALID
    title = "Invalid edit"


class NotAcceptable(DomainError):
    """The Accept header names no representation the API produces."""

    kind = ErrorKind.NOT_ACCEPTABLE
    title = "Not acceptable"


class RunFailed(Exception):
    """A run cannot continue; ``code`` and ``message`` go into the `error` event as they are."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# --- deep research ---


class ResearchNotFound(DomainError):
    """No research run with that id (never created, or expired)."""

    kind = ErrorKind.NOT_FOUND
    title = "Research run not found"


class ResearchConflict(DomainError):
    """The run's status does not allow the request (e.g. resuming a completed run)."""

    kind = ErrorKind.CONFLICT
    title = "Conflict"


class TooManyResearchRuns(DomainError):
    """The cap on research runs in flight is reached; ``retry_after_s`` says when to retry."""

    kind = ErrorKind.RATE_LIMITED
    title = "Too many research runs"


class ResearchUnavailable(DomainError):
    """This server runs without deep research (its LLM wiring has no generic calls)."""

    kind = ErrorKind.UNAVAILABLE
    title = "Research unavailable"
