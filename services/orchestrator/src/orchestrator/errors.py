"""Errors the orchestrator maps to RFC 7807 problems (HTTP) or to `error` events (runs)."""

from __future__ import annotations


class ApiProblem(Exception):
    """A request the API refuses; ``detail`` is safe to show the caller."""

    status = 400
    title = "Bad request"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class SessionNotFound(ApiProblem):
    """No session with that id (never created, expired or deleted)."""

    status = 404
    title = "Session not found"


class NotAcceptable(ApiProblem):
    """The Accept header names no representation the API produces."""

    status = 406
    title = "Not acceptable"


class RunFailed(Exception):
    """A run cannot continue; ``code`` and ``message`` go into the `error` event as they are."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# --- deep research ---


class ResearchNotFound(ApiProblem):
    """No research run with that id (never created, or expired)."""

    status = 404
    title = "Research run not found"


class ResearchConflict(ApiProblem):
    """The run's status does not allow the request (e.g. resuming a completed run)."""

    status = 409
    title = "Conflict"


class TooManyResearchRuns(ApiProblem):
    """The cap on research runs in flight is reached; ``headers`` carries Retry-After."""

    status = 429
    title = "Too many research runs"

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail)
        self.headers = {"Retry-After": str(retry_after_s)}


class ResearchUnavailable(ApiProblem):
    """This server runs without deep research (its LLM wiring has no generic calls)."""

    status = 503
    title = "Research unavailable"
