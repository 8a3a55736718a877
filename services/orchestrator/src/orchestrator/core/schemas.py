"""Structured LLM outputs: planner and judge. Field order is the order the model writes them.

Measured with small local models (shared/notes/embedded-llm.md §4): putting the reasoning field
first and defining each label in the prompt raised right decisions from 7/14 to 13/14.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

# What the model may write in a plan's text (its grammar; orchestrator/core/structured.py). Only the
# schema sent to the model says so: the plan the loop follows carries the question itself when
# the model wrote no query, and a question may be 2,000 characters (api/http/models.py).
ModelText = Annotated[str, WithJsonSchema({"maxLength": 300, "type": "string"})]


class Plan(BaseModel):
    """The planner's decision over the question and the session history."""

    model_config = ConfigDict(extra="ignore")

    # The action comes first: with history_sufficiency first, Qwen2.5-Coder-1.5B followed
    # "insufficient" (every new question) with "clarify", even for "What is the capital of
    # France?" (3/8 right actions; 7/8 with the action first; `make test-models`).
    action: Literal["clarify", "proceed"] = "proceed"
    clarifying_question: ModelText | None = None
    optimized_query: ModelText | None = None
    history_sufficiency: Literal["sufficient", "partial", "insufficient"] = "insufficient"


class Judgement(BaseModel):
    """The judge's verdict over snippets or chunks."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", max_length=2000)
    sufficiency: Literal["sufficient", "partial", "insufficient"] = "insufficient"
    gap_queries: list[str] = Field(default_factory=list, max_length=3)
