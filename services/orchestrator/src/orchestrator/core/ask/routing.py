"""Category routing: which SearXNG category (general, it, science, news) and time range suit a
question. Pure rules over the question's words.

Rules, not an LLM field: the planner's structured output is already the slowest step on a CPU
model, and a small model picks categories no better than a keyword list (measured with Gemma
3 270M: it copies the first label it is shown). A request's own ``categories`` / ``time_range``
always win; ``general`` adds nothing, so it is never sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_IT = re.compile(
    r"\b(python|javascript|typescript|rust|golang|java|c\+\+|kotlin|linux|kernel|docker|"
    r"kubernetes|k8s|git|github|api|sdk|compiler|segfault|stack ?trace|exception|traceback|"
    r"npm|pip|pypi|sql|postgres(ql)?|sqlite|mysql|regex|bash|shell|nginx|http|tcp|dns|ssh|"
    r"grpc|json|yaml|css|html|react|django|fastapi|error code|library|framework|function|"
    r"programming|software|debian|ubuntu)\b",
    re.IGNORECASE,
)
_SCIENCE = re.compile(
    r"\b(study|studies|paper|peer[- ]reviewed|journal|arxiv|doi|clinical|trial|hypothesis|"
    r"theorem|proof|physics|chemistry|biology|genome|protein|molecule|quantum|astronomy|"
    r"species|enzyme|neuron|meta-analysis|research(ers)?)\b",
    re.IGNORECASE,
)
_NEWS = re.compile(
    r"\b(news|latest|breaking|today|tonight|yesterday|this (week|month|morning)|"
    r"right now|currently|announced?|election|headlines?|just (happened|released))\b",
    re.IGNORECASE,
)
_DAY = re.compile(r"\b(today|tonight|yesterday|right now|breaking|this morning)\b", re.IGNORECASE)
_WEEK = re.compile(r"\b(this week|latest|news|just (happened|released))\b", re.IGNORECASE)
_MONTH = re.compile(r"\b(this month|recent(ly)?|new(est)? (release|version))\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(this year|(19|20)\d\d)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Route:
    """Where to search: a SearXNG category (None = general) and a time range (None = any)."""

    category: str | None = None
    time_range: str | None = None


# The first rule that matches picks the category (news before it before science).
_RULES = (("news", _NEWS), ("it", _IT), ("science", _SCIENCE))
#: Every category ``route`` may pick: SearXNG needs an engine in each (searxng/settings.yml).
CATEGORIES = tuple(name for name, _ in _RULES)


def route(question: str, *, today: date | None = None) -> Route:
    """The category and time range ``question`` calls for."""
    category = next((name for name, rule in _RULES if rule.search(question)), None)
    return Route(category, _time_range(question, today or date.today()))


def _time_range(question: str, today: date) -> str | None:
    if _DAY.search(question):
        return "day"
    if _WEEK.search(question):
        return "week"
    if _MONTH.search(question):
        return "month"
    years = [int(m.group(0)) for m in _YEAR.finditer(question) if m.group(0).isdigit()]
    if "this year" in question.lower() or (years and max(years) >= today.year):
        return "year"
    return None
