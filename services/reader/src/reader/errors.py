"""Reader errors: per-URL failures carry a Status; the rest map to gRPC codes in service.py."""

from __future__ import annotations

from reader.model import Status


class ReadFailure(Exception):
    """A per-URL outcome that is not OK; reported as ``status`` + short ``error``."""

    def __init__(self, status: Status, reason: str, *, http_status: int = 0) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.http_status = http_status


class Overloaded(Exception):
    """The extraction queue is full; the caller should back off (RESOURCE_EXHAUSTED)."""


class ExtractionTimeout(Exception):
    """A worker did not finish one page in time; it was killed and replaced."""


class WorkerCrashed(Exception):
    """A worker process died while extracting (e.g. out of memory); it was replaced."""


class PoolClosed(Exception):
    """The pool is shutting down and takes no new work."""


class ExtractionFailed(Exception):
    """The extractor raised on one document (the exception name is the message)."""
