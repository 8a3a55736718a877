"""Property: whatever a request model accepts, the models the pipeline builds from it accept too.

Requests are drawn from each request model's own JSON schema, leaning on its limits (strings
and lists at their minimum and maximum lengths, numbers at their bounds), and fed to the code
that turns them into internal models: the loop's plan, the run options, the research scope
(the model's answer and the fallback when it gives none) and the plan-review edit. A question
of 2,000 characters failed here twice: the research fallback scope made it a 100-character
dimension, and the loop's plan carried it in a 300-character query field.
"""

from __future__ import annotations

import string
from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from orchestrator.api.http.models import SearchRequest
from orchestrator.api.http.research_models import ContinueRequest, ResearchRequest
from orchestrator.config import Settings
from orchestrator.core.ask.intent import prefilter
from orchestrator.core.ask.plan import combine
from orchestrator.core.ask.ports import Decision
from orchestrator.core.ask.service import run_options
from orchestrator.core.research.context import Ctx
from orchestrator.core.research.phases import replace_dimensions, scope
from orchestrator.core.research.schemas import DIMENSION_CHARS, Scope, fallback_scope
from orchestrator.core.research.state import ResearchState
from orchestrator.core.schemas import Plan
from orchestrator.core.sessions import Turn
from orchestrator.core.structured import default_plan
from pydantic import BaseModel, ValidationError

WORDS = st.sampled_from(["tides", "the", "Moon", "été", "東京", "why?", "it", "x" * 40, "\t", " "])
# Strings the schemas leave open are drawn this long at most (the body bound is 64 KiB).
OPEN_STRING = 3000
RUNS = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def _text(low: int, high: int) -> st.SearchStrategy[str]:
    """Text of a length from [low, high], the bounds themselves half of the time."""
    length = st.one_of(st.sampled_from([low, high]), st.integers(low, high))

    def fill(size: int) -> st.SearchStrategy[str]:
        words = st.lists(WORDS, min_size=1, max_size=400).map(" ".join)
        pad = st.text(string.ascii_letters + " ", min_size=size, max_size=size)
        return st.tuples(words, pad).map(lambda t: (t[0] + " " + t[1])[:size])

    return length.flatmap(fill)


def from_schema(spec: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for the JSON schema ``spec``, leaning on its limits."""
    if "$ref" in spec:
        return from_schema(defs[spec["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in spec:
        return st.one_of([from_schema(s, defs) for s in spec["anyOf"]])
    if "enum" in spec or "const" in spec:
        return st.sampled_from(spec.get("enum") or [spec["const"]])
    kind = spec.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high = spec.get("minimum", -(2**31)), spec.get("maximum", 2**31)
        return st.one_of(st.sampled_from([low, high]), st.integers(low, high))
    if kind == "string":
        if "pattern" in spec:
            return st.from_regex(spec["pattern"], fullmatch=True)
        return _text(spec.get("minLength", 0), spec.get("maxLength", OPEN_STRING))
    if kind == "array":
        low, high = spec.get("minItems", 0), spec.get("maxItems", 8)
        return st.lists(from_schema(spec.get("items", {}), defs), min_size=low, max_size=high)
    if kind == "object":
        props = spec.get("properties", {})
        required = set(spec.get("required", []))
        fields = {k: from_schema(v, defs) for k, v in props.items() if k in required}
        optional = {k: from_schema(v, defs) for k, v in props.items() if k not in required}
        return st.fixed_dictionaries(fields, optional=optional)
    raise AssertionError(f"no strategy for {spec}")


def requests(model: type[BaseModel]) -> st.SearchStrategy[Any]:
    """Instances of ``model`` drawn from its schema (each one it accepts, by construction)."""
    schema = model.model_json_schema()
    return from_schema(schema, schema.get("$defs", {})).map(model.model_validate)


@RUNS
@given(request=requests(SearchRequest), model=st.sampled_from([None, default_plan()]))
def test_a_search_request_gives_a_plan_and_run_options(
    request: SearchRequest, model: Plan | None
) -> None:
    for history in ([], [Turn(request.query, "An answer about it.", (), "answered", 0.0)]):
        pre = prefilter(request.query, has_history=bool(history))
        plan = combine(pre, model, request.query, history)
        assert Plan.model_validate(plan.model_dump()) == plan
    options = run_options(request.options, Settings())
    assert options.max_rounds == request.options.max_rounds


class _ScopeCtx(SimpleNamespace):
    """What the scope step reads of its context; the model's reply is scripted."""

    def __init__(self, query: str, reply: Scope | None) -> None:
        super().__init__(query=query, mode="deep-research", earlier="", state=ResearchState())
        self.settings = Settings()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._reply = reply

    async def structured(self, messages: Any, model_cls: Any, default: Scope) -> Decision[Scope]:
        if self._reply is None:  # no valid output after the retry: the default is used
            return Decision(default, used_default=True, attempts=2)
        return Decision(self._reply)

    def emit(self, type_: str, data: dict[str, Any]) -> None:
        self.events.append((type_, data))


scope_replies = st.one_of(st.none(), requests(Scope))


@RUNS
@given(request=requests(ResearchRequest), reply=scope_replies)
async def test_a_research_request_is_scoped_with_or_without_the_model(
    request: ResearchRequest, reply: Scope | None
) -> None:
    Scope.model_validate(fallback_scope(request.query).model_dump())
    ctx = _ScopeCtx(request.query, reply)
    await scope(cast(Ctx, ctx))
    dims = ctx.state.dimensions
    assert 1 <= len(dims) <= ctx.settings.research_max_dimensions
    assert all(d.title and len(d.title) <= DIMENSION_CHARS for d in dims) or (
        not request.query.strip() and [d.title for d in dims] == [request.query]
    )
    ResearchState.model_validate(ctx.state.model_dump())


@RUNS
@given(request=requests(ContinueRequest))
def test_a_plan_review_edit_gives_valid_dimensions(request: ContinueRequest) -> None:
    state = ResearchState()
    replace_dimensions(state, request.dimensions or [])
    assert all(0 < len(d.title) <= DIMENSION_CHARS for d in state.dimensions)
    ResearchState.model_validate(state.model_dump())


@pytest.mark.parametrize("length", [101, 301, 2000])
async def test_a_long_research_question_falls_back_to_a_scope_that_fits(length: int) -> None:
    query = ("why do the tides of the Bay of Fundy rise so high " * 50)[:length]
    ctx = _ScopeCtx(query, None)
    await scope(cast(Ctx, ctx))
    (dim,) = ctx.state.dimensions
    assert query.startswith(dim.title)
    assert len(dim.title) <= 100
    assert ctx.state.brief  # the model's brief, else the question


@pytest.mark.parametrize(
    "url", ["http://[", "http://h:99999", "http://:80/x", "https://a, http://["]
)
def test_a_url_setting_that_does_not_parse_is_refused_at_start(url: str) -> None:
    with pytest.raises(ValidationError, match=r"URL|host"):
        Settings(searxng_url=url)
    with pytest.raises(ValidationError):
        Settings(llm_base_url=url.split(",")[-1].strip())
