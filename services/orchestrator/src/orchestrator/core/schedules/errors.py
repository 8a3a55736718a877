"""The schedules' domain errors (kinds only: each face maps them to its wire)."""

from __future__ import annotations

from orchestrator.core.errors import DomainError, ErrorKind


class ScheduleNotFound(DomainError):
    """No schedule with that id for the caller (never created, deleted, or someone else's)."""

    kind = ErrorKind.NOT_FOUND
    title = "Schedule not found"


class InvalidSchedule(DomainError):
    """A schedule's cron expression, time zone or webhook cannot be used."""

    kind = ErrorKind.INVALID
    title = "Invalid schedule"


class ScheduleConflict(DomainError):
    """The schedule's state does not allow the request (e.g. a run of it is still going)."""

    kind = ErrorKind.CONFLICT
    title = "Conflict"


class NotifyFailed(Exception):
    """A notification was not delivered; the message is safe to store and show the owner."""
