"""Exit statuses every ``quarry`` command shares, and the text of an API problem."""

from __future__ import annotations

import httpx

EXIT_OK = 0
EXIT_FAILED = 1  # the run failed: an `error` event, a server error
EXIT_USAGE = 2  # bad usage, or a request the API refused (4xx)
EXIT_CLARIFY = 3  # `quarry ask`: the engine asked a clarifying question
EXIT_UNREACHABLE = 4  # the API could not be reached
EXIT_CANCELLED = 5  # `quarry research`: the run was cancelled


def problem_message(reply: httpx.Response) -> str:
    """The ``detail`` of a problem+json reply, else its title, else the status."""
    try:
        body = reply.json()
    except ValueError:
        return f"HTTP {reply.status_code}"
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or f"HTTP {reply.status_code}")
    return f"HTTP {reply.status_code}"


def refused(reply: httpx.Response) -> int:
    """The exit status for a refusing reply: the caller's fault (4xx) or the server's (5xx)."""
    return EXIT_USAGE if reply.status_code < 500 else EXIT_FAILED
