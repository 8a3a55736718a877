"""The calculator (simpleeval), the arithmetic pre-check and the date pattern."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from orchestrator.core.ask import calc, clock
from orchestrator.core.ask.direct import direct_answer


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("What is 17 * 23?", "391"),
        ("2^10", "1024"),
        ("calculate (3+4)*5", "35"),
        ("What is 15% of 80?", "12"),
        ("how much is 1,000,000 / 4", "250000"),
        ("what is sqrt(16) + 1", "5"),
        ("what is 6 times 7", "42"),
        ("what's 3 x 4?", "12"),
        ("what is 7 \u00d7 6", "42"),
    ],
)
def test_arithmetic_questions_are_computed(question: str, value: str) -> None:
    found = calc.arithmetic(question)
    assert found is not None
    assert found.value == value


@pytest.mark.parametrize(
    "question",
    [
        "python 3.11 - 3.10 changes",
        "Windows 10 - 11 differences",
        "what is 2024-05-01",
        "what is 10.0.0.0/8",
        "who is 3 + 4 band",
        "what is 10/0",
        "what is the population of France times 2",
        "what is 42",
        "why is the sky blue?",
    ],
)
def test_other_questions_are_not_arithmetic(question: str) -> None:
    assert calc.arithmetic(question) is None


@pytest.mark.parametrize(
    "expression",
    ["().__class__", "__import__('os')", "open('x')", "9**9**9**9", "'a' * 10**9", "1/0", "x+1"],
)
def test_evaluate_refuses_what_is_not_safe_arithmetic(expression: str) -> None:
    with pytest.raises(calc.CalcError):
        calc.evaluate(expression)


def test_evaluate_refuses_a_long_expression() -> None:
    with pytest.raises(calc.CalcError, match="longer"):
        calc.evaluate("1+" * 150 + "1")


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("what is the date today?", True),
        ("What time is it?", True),
        ("whats the time", True),
        ("what day is it today", True),
        ("what is today's date", True),
        ("what is the date of the french revolution", False),
        ("what time is the eclipse", False),
    ],
)
def test_date_questions(question: str, asks: bool) -> None:
    assert clock.asks_now(question) is asks


def test_direct_answer_uses_the_clock_given() -> None:
    moment = datetime(2031, 2, 3, 4, 5, tzinfo=UTC)
    assert direct_answer("what is the date today?", lambda: moment) == (
        "clock",
        "It is Monday, 3 February 2031, 04:05 (UTC) by this server's clock.",
    )
    assert direct_answer("why is the sky blue?", lambda: moment) is None
