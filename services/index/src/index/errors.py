"""Index errors; service.py maps them to gRPC status codes."""

from __future__ import annotations


class IndexServiceError(Exception):
    """Base class; the message is safe to show the caller."""


class InvalidRequestError(IndexServiceError):
    """A request field is malformed or out of range (INVALID_ARGUMENT)."""


class BoundExceededError(InvalidRequestError):
    """An input is beyond one of the documented bounds (INVALID_ARGUMENT naming the bound)."""


class NotFoundError(IndexServiceError):
    """The named thing does not exist (NOT_FOUND)."""


class CorpusStorageError(IndexServiceError):
    """The index could not be written to the data directory (INTERNAL)."""


class IndexOutdatedError(IndexServiceError):
    """The stored index was built with other text settings and waits to be rebuilt
    (FAILED_PRECONDITION: the operator runs ``quarry index``)."""


class StagingFullError(IndexServiceError):
    """Too much staged text waits for a commit (RESOURCE_EXHAUSTED)."""
