"""Structured outputs of the research calls. Field order is the order the model writes them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

DIMENSION_CHARS = 160
# What the model may write per dimension: llama-cpp-python expands maxLength into nested
# optionals, so the grammar grows with every character allowed (see orchestrator/structured.py).
DimensionText = Annotated[str, Field(max_length=100)]


class Scope(BaseModel):
    """The scope call: a brief and the research dimensions."""

    model_config = ConfigDict(extra="ignore")

    brief: str = Field(default="", max_length=300)
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
