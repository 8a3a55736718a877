"""Labelled planner and judge cases for `make test-models`.

The facts are invented (the fixture web of tests/e2e), so a model can only judge them from the
text given, never from what it memorised. Labels say what a careful reader would decide; where
two labels are defensible both are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from orchestrator.core.ask.domain import Evidence
from orchestrator.core.sessions import Turn

ZEPHYRINE = (
    "The Zephyrine Lighthouse stands on the basalt headland of Karvik Point. It was designed by "
    "the engineer Mara Olsen and first lit in 1874. Its lantern burned colza oil until 1911, "
    "when an acetylene lamp replaced it. The tower is 31 metres tall."
)
KARVIK_HISTORY = (
    "Karvik Point was a fishing settlement long before the lighthouse was built. Mara Olsen "
    "won the design competition with a tapering stone tower."
)
GLOWMOSS = (
    "Glowmoss (Bryum lucens) emits a faint green light at night. The glow comes from a "
    "luciferin that the moss produces only when air temperature is below 8 degrees."
)
GLOWMOSS_BRIGHTNESS = (
    "In 2019 a team at the Tromsvik field station measured glowmoss brightness across a full "
    "winter. Brightness peaked in January at about 0.2 lux."
)
FERRY = (
    "The ferry between Karvik and Holm island sails four times a day in summer and twice a day "
    "from October to April. The crossing takes 40 minutes."
)
SALTBREAD = (
    "Karvik saltbread is a dense rye loaf baked with seawater instead of salt. The loaf is "
    "baked at 210 degrees Celsius for 55 minutes."
)


def _turn(question: str, answer: str, url: str) -> Turn:
    source = {"n": 1, "url": url, "title": "", "excerpt": answer}
    return Turn(question, answer, (source,), "answered", 0.0)


LIGHTHOUSE_TURN = _turn(
    "Who designed the Zephyrine Lighthouse?",
    "The Zephyrine Lighthouse was designed by the engineer Mara Olsen and first lit in 1874 [1].",
    "https://karvik.example/lighthouses/zephyrine",
)
SALTBREAD_TURN = _turn(
    "What is Karvik saltbread?",
    "Karvik saltbread is a dense rye loaf baked with seawater instead of salt [1].",
    "https://karvik.example/food/saltbread",
)
EIFFEL_TURN = _turn(
    "How old is the Eiffel Tower?",
    "The Eiffel Tower opened in 1889, for the World's Fair in Paris [1].",
    "https://example.org/eiffel",
)
FERRY_TURN = _turn(
    "How long does the Karvik-Holm ferry crossing take?",
    "The crossing between Karvik and Holm island takes 40 minutes [1].",
    "https://karvik.example/ferry",
)
GLOWMOSS_TURN = _turn(
    "What is glowmoss?",
    "Glowmoss (Bryum lucens) is a moss that emits a faint green light at night [1].",
    "https://karvik.example/nature/glowmoss",
)
QUARRY_TURN = _turn(
    "What does Quarry do?",
    "Quarry is a self-hosted answer engine that searches and answers with cited sources [1].",
    "https://quarry.example/readme",
)


Category = Literal["clear", "ambiguous", "follow-up"]


@dataclass(frozen=True)
class PlanCase:
    """A question (after ``turns``) and what counts as the right decision.

    clear: a first question that must be searched (proceed); ambiguous: a first question with
    no referent that must be asked back (clarify); follow-up: a question after ``turns`` whose
    search query must name its referent (any word of ``referent``).
    """

    category: Category
    name: str
    question: str
    turns: tuple[Turn, ...] = ()
    referent: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeCase:
    """A question, the numbered evidence, and the verdict that counts as right."""

    name: str
    question: str
    verdict: str
    texts: tuple[str, ...] = field(default_factory=tuple)

    def evidence(self) -> list[Evidence]:
        """The evidence as the agent loop passes it (page passages)."""
        return [
            Evidence(f"https://karvik.example/page{i}", f"Page {i}", text)
            for i, text in enumerate(self.texts, start=1)
        ]


PLAN_CASES = (
    PlanCase("clear", "a fixture fact", "Who designed the Zephyrine Lighthouse?"),
    PlanCase("clear", "issue 14: own documents", "How do I make Quarry search my own documents?"),
    PlanCase(
        "clear",
        "issue 14: env variable",
        "Which environment variable sets the folder of local documents that Quarry indexes?",
    ),
    PlanCase("clear", "issue 14: what Quarry does", "What does Quarry do?"),
    PlanCase("clear", "capital", "What is the capital of France?"),
    PlanCase("clear", "ferry duration", "How long does the Karvik-Holm ferry crossing take?"),
    PlanCase("clear", "a cause", "Why does glowmoss glow at night?"),
    PlanCase("clear", "how-to", "How do I reverse a list in Python?"),
    PlanCase("clear", "a date", "When was the Eiffel Tower built?"),
    PlanCase("clear", "side effects", "What are the side effects of ibuprofen?"),
    PlanCase("clear", "comparison", "Compare PostgreSQL and SQLite for a small web app."),
    PlanCase("clear", "an explanation", "How does BM25 ranking work?"),
    PlanCase("clear", "dummy 'it'", "Is it safe to eat raw cookie dough?"),
    PlanCase("clear", "existential 'there'", "Is there a way to run Quarry without Docker?"),
    PlanCase("clear", "'it' about time", "What time is it in Tokyo right now?"),
    PlanCase("clear", "two words", "Explain photosynthesis"),
    PlanCase("clear", "two-word topic", "Rust ownership"),
    PlanCase("clear", "a number", "How many people live in Norway?"),
    PlanCase("clear", "a condition", "What is the boiling point of water at high altitude?"),
    PlanCase("clear", "quarry port", "Which port does the Quarry API listen on by default?"),
    PlanCase("clear", "quarry ollama", "How do I point Quarry at an Ollama server?"),
    PlanCase(
        "clear", "'it' with its referent", "Who wrote the novel Dune and when was it published?"
    ),
    PlanCase("clear", "a difference", "What is the difference between TCP and UDP?"),
    PlanCase("clear", "quarry cancel", "How do I cancel a running question in Quarry?"),
    PlanCase("clear", "a place", "Where is Karvik Point?"),
    PlanCase("ambiguous", "dangling 'it'", "How tall is it?"),
    PlanCase("ambiguous", "'the other one'", "And what about the other one?"),
    PlanCase("ambiguous", "tell me more", "Tell me more about it."),
    PlanCase("ambiguous", "what does that mean", "What does that mean?"),
    PlanCase("ambiguous", "they did that", "Why did they do that?"),
    PlanCase("ambiguous", "better than what", "Is it better?"),
    PlanCase("ambiguous", "price of what", "How much does it cost?"),
    PlanCase("ambiguous", "who made this", "Who made this?"),
    PlanCase("ambiguous", "what about those", "What about those?"),
    PlanCase("ambiguous", "explain that again", "Can you explain that again?"),
    PlanCase(
        "follow-up",
        "answered by history",
        "When was it first lit?",
        (LIGHTHOUSE_TURN,),
        ("zephyrine", "lighthouse"),
    ),
    PlanCase(
        "follow-up",
        "needs a search",
        "How tall is it?",
        (LIGHTHOUSE_TURN,),
        ("zephyrine", "lighthouse"),
    ),
    PlanCase(
        "follow-up",
        "another topic, no pronoun",
        "How long is the dough proofed?",
        (SALTBREAD_TURN,),
        ("saltbread", "bread"),
    ),
    PlanCase("follow-up", "Eiffel: how tall", "How tall is it?", (EIFFEL_TURN,), ("eiffel",)),
    PlanCase("follow-up", "Eiffel: who designed", "Who designed it?", (EIFFEL_TURN,), ("eiffel",)),
    PlanCase(
        "follow-up",
        "ferry in winter",
        "How often does it sail in winter?",
        (FERRY_TURN,),
        ("ferry", "karvik", "holm"),
    ),
    PlanCase(
        "follow-up",
        "glowmoss cold",
        "Why does it only glow when it is cold?",
        (GLOWMOSS_TURN,),
        ("glowmoss", "moss"),
    ),
    PlanCase("follow-up", "install Quarry", "How do I install it?", (QUARRY_TURN,), ("quarry",)),
    PlanCase(
        "follow-up",
        "baking temperature",
        "At what temperature is it baked?",
        (SALTBREAD_TURN,),
        ("saltbread", "bread"),
    ),
)

JUDGE_CASES = (
    JudgeCase(
        "both facts stated",
        "Who designed the Zephyrine Lighthouse and when was it first lit?",
        "sufficient",
        (ZEPHYRINE,),
    ),
    JudgeCase(
        "designer only",
        "Who designed the Zephyrine Lighthouse and when was it first lit?",
        "partial",
        (KARVIK_HISTORY,),
    ),
    JudgeCase(
        "unrelated pages",
        "How long does the Karvik-Holm ferry crossing take?",
        "insufficient",
        (SALTBREAD, GLOWMOSS),
    ),
    JudgeCase("cause stated", "Why does glowmoss glow?", "sufficient", (GLOWMOSS,)),
    JudgeCase(
        "one of two facts",
        "In which month is glowmoss brightest, and what animals does its glow attract?",
        "partial",
        (GLOWMOSS_BRIGHTNESS,),
    ),
    JudgeCase(
        "same place, other fact",
        "How many people live on Holm island?",
        "insufficient",
        (FERRY,),
    ),
)
