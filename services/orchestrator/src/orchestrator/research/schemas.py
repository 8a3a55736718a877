"""Structured outputs of the research calls. Field order is the order the model writes them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DIMENSION_CHARS = 160


class Scope(BaseModel):
    """The scope call: a brief and the research dimensions."""

    model_config = ConfigDict(extra="ignore")

    brief: str = Field(default="", max_length=600)
    dimensions: list[str] = Field(min_length=1, max_length=8)


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
    new_dimensions: list[str] = Field(default_factory=list, max_length=3)
