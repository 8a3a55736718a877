"""Structured outputs of the research calls. Field order is the order the model writes them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

# A dimension as a search query: what a client's edit is cut to (the plan review).
DIMENSION_CHARS = 160
# What the model may write per dimension: llama-cpp-python expands maxLength into nested
# optionals, so the grammar grows with every character allowed (see
# orchestrator/core/structured.py).
MODEL_DIMENSION_CHARS = 100
BRIEF_CHARS = 300
DimensionText = Annotated[str, Field(max_length=MODEL_DIMENSION_CHARS)]


class Scope(BaseModel):
    """The scope call: a brief and the research dimensions."""

    model_config = ConfigDict(extra="ignore")

    brief: str = Field(default="", max_length=BRIEF_CHARS)
    dimensions: list[DimensionText] = Field(min_length=1, max_length=6)


class Compressed(BaseModel):
    """A dimension's passages compressed into a summary and one key finding."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1, max_length=1200)
    key_finding: str = Field(min_length=1, max_length=400)


class Evaluation(BaseModel):
    """The coverage check over every finding so far."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", max_length=600)
    coverage: Literal["complete", "gaps"] = "complete"
    new_dimensions: list[DimensionText] = Field(default_factory=list, max_length=3)


def clip(text: str, limit: int) -> str:
    """``text`` with its whitespace folded, cut at the last word that fits in ``limit``."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    cut = folded[: limit + 1].rsplit(" ", 1)[0]
    return cut if 0 < len(cut) <= limit else folded[:limit]


def fallback_scope(query: str) -> Scope:
    """The scope when the model gives none: the question as the brief and the one dimension,
    cut to the limits the model's own scope has (a question may be far longer)."""
    return Scope(brief=clip(query, BRIEF_CHARS), dimensions=[clip(query, MODEL_DIMENSION_CHARS)])
