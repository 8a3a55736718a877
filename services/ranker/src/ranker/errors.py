"""Ranker errors; service.py maps them to gRPC status codes."""

from __future__ import annotations


class RankerError(Exception):
    """Base class; the message is safe to show the caller."""


class InvalidRequestError(RankerError):
    """A request field is malformed or out of range (INVALID_ARGUMENT)."""


class BoundExceededError(InvalidRequestError):
    """An input is beyond one of the documented bounds (INVALID_ARGUMENT naming the bound)."""
