"""The current date and time, and the questions that ask only for it (no search needed)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

#: Now, with the machine's time zone (a parameter so tests can fix the moment).
Clock = Callable[[], datetime]

_ASKS_NOW = re.compile(
    r"^\s*(?:(?:hey|hi|please|so|ok(?:ay)?)[,\s]+)*"
    r"(?:what(?:'s|s| is)|tell me|do you know)\s+"
    r"(?:the\s+)?(?P<what>"
    r"(?:current\s+)?(?:date|time|day(?: of the week)?|year|month)"
    r"(?:\s+and\s+(?:the\s+)?(?:date|time))?"
    r"|today'?s date|the date today"
    r")(?:\s+(?:is it|today|now|right now|it is))*\s*[?.!]*\s*$"
    r"|^\s*(?:what (?:time|day|year|month) is it|which day is (?:it|today)|what day is today"
    r"|what'?s today)(?:\s+(?:today|now|right now))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def system_now() -> datetime:
    """The machine's local time, zone attached."""
    return datetime.now().astimezone()


def describe(moment: datetime) -> str:
    """``moment`` as a sentence: weekday, date, time and zone."""
    zone = moment.tzname() or "local time"
    return (
        f"It is {moment:%A}, {moment.day} {moment:%B %Y}, {moment:%H:%M} ({zone}) "
        "by this server's clock."
    )


def iso(moment: datetime) -> dict[str, str]:
    """The date tool's result: ISO date and time, weekday and zone."""
    return {
        "iso": moment.isoformat(timespec="seconds"),
        "date": moment.date().isoformat(),
        "time": moment.strftime("%H:%M:%S"),
        "weekday": moment.strftime("%A"),
        "timezone": moment.tzname() or "",
    }


def asks_now(question: str) -> bool:
    """True when the question asks only for today's date, the time, the weekday or year."""
    return bool(_ASKS_NOW.match(question))
