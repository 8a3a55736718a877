"""When a schedule fires: a cron expression (or a named preset) read in an IANA time zone.

Pure: no clock of its own (every function takes ``now``), no I/O. cronsim evaluates the
expression in the zone's local time, so "0 6 * * *" in Europe/Paris is 06:00 in Paris in
winter and in summer, and a time skipped or repeated by a DST change fires once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from orchestrator.core.schedules.errors import InvalidSchedule

# Named schedules: a morning report, every day or every Monday, in the schedule's time zone.
PRESETS = {
    "hourly": "0 * * * *",
    "daily": "0 6 * * *",
    "weekly": "0 6 * * 1",
}
MAX_EXPR_CHARS = 120
# How many upcoming firings are checked against the minimum interval: enough to catch a
# list like "0,5 * * * *" whose short gap is not the first one.
GAPS_CHECKED = 48


@dataclass(frozen=True)
class Spec:
    """A validated schedule: the expression as given, the cron it means, and its zone."""

    cron: str
    timezone: str

    @property
    def expression(self) -> str:
        """The five-field cron expression (a preset resolved)."""
        return PRESETS.get(self.cron.strip().lower(), self.cron.strip())

    def zone(self) -> ZoneInfo:
        """The time zone (validated when the Spec was made)."""
        return ZoneInfo(self.timezone)

    def next_after(self, now: datetime) -> datetime:
        """The first firing strictly after ``now`` (aware), in UTC.

        Raises:
            InvalidSchedule: the expression never fires (e.g. "0 0 30 2 *").
        """
        local = now.astimezone(self.zone()).replace(second=0, microsecond=0)
        try:
            fire = next(iter(CronSim(self.expression, local)))
        except (StopIteration, CronSimError):
            raise InvalidSchedule(f"The schedule {self.cron!r} never fires.") from None
        return fire.astimezone(UTC)


def _zone(name: str) -> ZoneInfo:
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        raise InvalidSchedule(f"Unknown time zone {name!r} (use an IANA name like Europe/Paris).")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidSchedule(
            f"Unknown time zone {name!r} (use an IANA name like Europe/Paris)."
        ) from None


def parse(cron: str, timezone: str, now: datetime, min_interval_s: float) -> Spec:
    """Validate a schedule as the API receives it.

    Raises:
        InvalidSchedule: a bad expression, an unknown zone, a schedule that never fires or
            fires more often than ``min_interval_s``.
    """
    text = " ".join(cron.split())
    if not text or len(text) > MAX_EXPR_CHARS:
        raise InvalidSchedule("A schedule is a cron expression or daily, weekly or hourly.")
    _zone(timezone)
    spec = Spec(text, timezone)
    expr = spec.expression
    if len(expr.split()) != 5:
        raise InvalidSchedule(
            f"Bad cron expression {text!r}: five fields (minute hour day month weekday), "
            "or daily, weekly or hourly."
        )
    try:
        upcoming = CronSim(expr, now.astimezone(spec.zone()).replace(second=0, microsecond=0))
        fires = list(itertools.islice(upcoming, GAPS_CHECKED + 1))
    except CronSimError as exc:
        raise InvalidSchedule(f"Bad cron expression {text!r}: {exc}.") from None
    except StopIteration:
        fires = []
    if not fires:
        raise InvalidSchedule(f"The schedule {text!r} never fires.")
    shortest = min((b - a for a, b in itertools.pairwise(fires)), default=timedelta(days=365))
    if shortest.total_seconds() < min_interval_s:
        raise InvalidSchedule(
            f"The schedule {text!r} fires every {int(shortest.total_seconds() // 60)} minutes; "
            f"the shortest interval allowed is {int(min_interval_s // 60)} minutes."
        )
    return spec


def due(next_run_at: float, now: datetime) -> bool:
    """Whether a schedule whose next firing is ``next_run_at`` (epoch s) is due at ``now``."""
    return next_run_at <= now.timestamp()
