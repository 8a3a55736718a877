"""Labelled planner and judge cases for `make test-models`.

The facts are invented (the fixture web of tests/e2e), so a model can only judge them from the
text given, never from what it memorised. Labels say what a careful reader would decide; where
two labels are defensible both are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.agent.domain import Evidence
from orchestrator.sessions import Turn

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


@dataclass(frozen=True)
class PlanCase:
    """A question (after ``history``) and the planner decisions that count as right."""

    name: str
    question: str
    action: str
    history: frozenset[str]
    turns: tuple[Turn, ...] = ()


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


NONE = frozenset({"insufficient"})
NOT_ENOUGH = frozenset({"insufficient", "partial"})

PLAN_CASES = (
    PlanCase("new question, no history", "Who designed the Zephyrine Lighthouse?", "proceed", NONE),
    PlanCase("dangling 'it', no history", "How tall is it?", "clarify", NONE),
    PlanCase("dangling 'the other one'", "And what about the other one?", "clarify", NONE),
    PlanCase(
        "follow-up the history answers",
        "When was it first lit?",
        "proceed",
        frozenset({"sufficient"}),
        (LIGHTHOUSE_TURN,),
    ),
    PlanCase(
        "follow-up needing a search", "How tall is it?", "proceed", NOT_ENOUGH, (LIGHTHOUSE_TURN,)
    ),
    PlanCase(
        "follow-up on another topic",
        "How long is the dough proofed?",
        "proceed",
        NOT_ENOUGH,
        (SALTBREAD_TURN,),
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
