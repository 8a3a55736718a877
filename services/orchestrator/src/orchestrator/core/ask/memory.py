"""How much of the conversation a run carries: the whole of it within a character budget, the
oldest turns leaving first (not the last few turns clipped to a few hundred characters)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.core.sessions import Turn


@dataclass(frozen=True)
class Memory:
    """The turns kept for the prompts and what the budget dropped."""

    kept: list[Turn]
    dropped: int
    chars: int
    budget: int

    def event(self) -> dict[str, int]:
        """The `memory` event's data."""
        return {
            "turns": len(self.kept) + self.dropped,
            "kept": len(self.kept),
            "dropped": self.dropped,
            "chars": self.chars,
            "budget": self.budget,
        }


def cost(turn: Turn) -> int:
    """Characters a turn takes in a prompt: its question and its answer."""
    return len(turn.question) + len(turn.answer)


def fit(history: Sequence[Turn], budget: int) -> Memory:
    """The newest turns whose questions and answers fit in ``budget`` characters, in order."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(history):
        if used + cost(turn) > budget:
            break
        kept.append(turn)
        used += cost(turn)
    kept.reverse()
    return Memory(kept, len(history) - len(kept), used, budget)
