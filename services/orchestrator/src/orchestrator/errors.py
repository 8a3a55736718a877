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


class InvalidEdit(ApiProblem):
    """``edit_turn`` names no turn of an existing session."""

    status = 422
    title = "Invalid edit"


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
