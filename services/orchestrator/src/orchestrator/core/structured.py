"""Structured LLM calls: schema-constrained, validated, retried once, then a safe default.

Measured with small local models (shared/notes/embedded-llm.md §4): schema-constrained output
always parses with ``json.loads(strict=False)`` (raw newlines occur inside strings), while
unconstrained output comes wrapped in code fences or prose. The schema sent to the server is
kept simple for llama.cpp's JSON-schema-to-grammar converters: no ``"type": [...]`` lists (they
drop sibling keywords such as ``maxLength``), ``anyOf`` for nullable strings, modest lengths.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from orchestrator.core.llm import LLMClient, Message
from orchestrator.core.schemas import Judgement, Plan
from orchestrator.core.think import strip_think

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

# llama-cpp-python expands maxLength N into N nested optionals (a 4.8 kB grammar for 400), so
# long free-text fields are capped here; the pydantic model still validates the result.
MAX_STRING = 400
# Strings without a bound (e.g. gap queries) get this one: a search query, not an essay.
DEFAULT_STRING = 200
# How much of an invalid reply is shown back to the model in the retry.
_ECHO_CHARS = 400
# A fenced block (```json ... ```), as unconstrained small models write it.
_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_DROP_KEYS = frozenset({"title", "default", "description", "examples"})

RETRY_INSTRUCTION = (
    "Your previous reply could not be used: {error}. Reply again with exactly one JSON object "
    "and nothing else (no prose, no code fences), matching this JSON schema:\n{schema}"
)


@dataclass(frozen=True)
class StructuredResult(Generic[M]):
    """A structured call's outcome; ``error`` says why the default was used, if it was."""

    value: M
    attempts: int
    used_default: bool
    error: str | None = None


def simple_schema(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the small-grammar-friendly form (fields in model order)."""
    raw = model_cls.model_json_schema()
    props = {name: _simplify(spec) for name, spec in raw.get("properties", {}).items()}
    return {
        "title": model_cls.__name__,
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _simplify(spec: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in spec.items() if k not in _DROP_KEYS}
    if "anyOf" in out:
        out["anyOf"] = [_simplify(s) for s in out["anyOf"]]
    if isinstance(out.get("type"), list):  # converters drop siblings of a type list
        out = {"anyOf": [{**out, "type": t} for t in out["type"]]}
        return _simplify(out)
    if out.get("type") == "string" and "enum" not in out:
        out["maxLength"] = min(int(out.get("maxLength", DEFAULT_STRING)), MAX_STRING)
    if out.get("type") == "array" and isinstance(out.get("items"), dict):
        out["items"] = _simplify(out["items"])
    return out


def parse_output(text: str, model_cls: type[M]) -> M:
    """Parse a reply into ``model_cls``; raise ValueError with a short reason if impossible."""
    text = strip_think(text)
    fenced = _FENCE_RE.search(text)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the reply contains no JSON object")
    try:
        obj = json.loads(text[start : end + 1], strict=False)
    except json.JSONDecodeError as err:
        raise ValueError(f"the reply is not valid JSON ({err.msg})") from None
    try:
        return model_cls.model_validate(obj)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "object"
        raise ValueError(f"field {where}: {first['msg']}") from None


async def structured_call(
    llm: LLMClient,
    messages: list[Message],
    model_cls: type[M],
    default: M,
    *,
    timeout: float,
) -> StructuredResult[M]:
    """Ask for ``model_cls`` as JSON; one stricter retry on invalid output, then ``default``.

    ``timeout`` bounds both attempts together. LLMError (the server failed) and TimeoutError
    (the caller's budget ran out) propagate: only *invalid output* turns into the default.
    """
    schema = simple_schema(model_cls)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    convo = list(messages)
    error = ""
    for attempt in (1, 2):
        text = await llm.complete_json(convo, schema, timeout=max(0.0, deadline - loop.time()))
        try:
            return StructuredResult(parse_output(text, model_cls), attempt, used_default=False)
        except ValueError as err:
            error = str(err)
            logger.warning(
                "invalid structured output",
                extra={"model": model_cls.__name__, "attempt": attempt, "error": error},
            )
            logger.debug("invalid structured output text: %r", text[:_ECHO_CHARS])
        convo = [
            *messages,
            {"role": "assistant", "content": text[:_ECHO_CHARS]},
            {
                "role": "user",
                "content": RETRY_INSTRUCTION.format(error=error, schema=json.dumps(schema)),
            },
        ]
    return StructuredResult(default, attempts=2, used_default=True, error=error)


def default_plan() -> Plan:
    """The safe plan: search with the original question."""
    return Plan(
        history_sufficiency="insufficient",
        action="proceed",
        clarifying_question=None,
        optimized_query=None,
    )


def default_judgement() -> Judgement:
    """The safe verdict: not enough evidence, and no gap queries to chase."""
    return Judgement(
        reasoning="No valid judgement from the model.", sufficiency="insufficient", gap_queries=[]
    )
