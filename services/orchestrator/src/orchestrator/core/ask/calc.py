"""A safe calculator and the questions it answers without a search.

Expressions are evaluated by simpleeval (MIT, maintained): it parses with Python's ``ast`` and
evaluates only the operators and functions given here — no ``eval``, no names beyond ``pi``
and ``e``, no attribute access, and limits on powers and string sizes. ``^`` means a power, as
people write it; the multiplication and division signs are accepted; ``15% of 80`` is ``15/100*80``.

``arithmetic(question)`` is the pipeline's deterministic pre-check: it finds an expression only
when everything else in the question is a polite wrapper ("what is", "calculate", "?"), so
"python 3.11 - 3.10 changes" is not taken for a subtraction.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import simpleeval

MAX_EXPRESSION_CHARS = 200
_FUNCTIONS: dict[str, Any] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "factorial": math.factorial,
}
# The multiplication, division and minus signs (escapes: ruff flags the look-alikes).
_SIGNS = str.maketrans({"\u00d7": "*", "\u00f7": "/", "\u2212": "-"})
_NAMES = {"pi": math.pi, "e": math.e}
# Characters an expression may hold once normalised (functions' letters come separately).
_EXPR_CHARS = re.compile(r"^[\d\s.+\-*/%()^,a-z_]+$")
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\s*(\d+(?:\.\d+)?)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_WRAPPER = re.compile(
    r"^\s*(?:(?:hey|hi|please|quick(?:ly)?|so|ok(?:ay)?)[,\s]+)*"
    r"(?:what(?:'s| is| are| does)?|how much(?: is| are)?|calculate|compute|evaluate|solve"
    r"|work out|tell me|can you (?:calculate|compute|tell me)|what do you get for)?\s*"
    r"(?P<expr>.+?)\s*(?:equals?|make|come to|give)?\s*(?:\?|=|\.|please)*\s*$",
    re.IGNORECASE,
)
_WORD_OPS = (
    (re.compile(r"\bplus\b", re.I), "+"),
    (re.compile(r"\bminus\b", re.I), "-"),
    (re.compile(r"\b(?:times|multiplied by)\b", re.I), "*"),
    (re.compile(r"\bdivided by\b", re.I), "/"),
    (re.compile(r"\b(?:to the power of|raised to)\b", re.I), "**"),
    (re.compile(r"\bsquare root of\b", re.I), "sqrt"),
)
_OPERATOR = re.compile(r"\d\s*(?:\*\*|[-+*/%])\s*[\d(.]|\b(?:" + "|".join(_FUNCTIONS) + r")\(")


# Numbers that only look like arithmetic: dates (2024-05-01), versions and addresses (10.0.0.1/8).
_NOT_ARITHMETIC = re.compile(r"^\d{4}-\d{1,2}(-\d{1,2})?$|\d+\.\d+\.\d+")


class CalcError(ValueError):
    """The expression could not be evaluated; the message says why (safe to show)."""


@dataclass(frozen=True)
class Calculation:
    """An evaluated expression: what was computed and its value as text."""

    expression: str
    value: str

    def sentence(self) -> str:
        """The answer as one sentence."""
        return f"{self.expression} = {self.value}"


def normalise(expression: str) -> str:
    """People's notation as Python's: ``^`` → ``**``, the multiplication,
    division and minus signs → ``*``, ``/``, ``-``, percent of,
    thousands separators dropped, words for operators."""
    text = expression.strip().translate(_SIGNS)
    for pattern, op in _WORD_OPS:
        text = pattern.sub(op, text)
    text = _THOUSANDS.sub("", text)
    text = _PERCENT_OF.sub(r"(\1/100*\2)", text)
    text = re.sub(r"(?<=\d)\s*[xX]\s*(?=\d)", "*", text)  # 3 x 4
    return text.replace("^", "**").strip()


def _format(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalcError("The expression does not give a number.")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise CalcError("The result is not a finite number.")
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.10g}"
    if abs(value) >= 10**30:
        return f"{value:.6e}"
    return str(value)


def evaluate(expression: str) -> Calculation:
    """Evaluate ``expression`` safely.

    Raises:
        CalcError: too long, not arithmetic, or it fails (division by zero, a power too big).
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalcError(f"The expression is longer than {MAX_EXPRESSION_CHARS} characters.")
    text = normalise(expression)
    if not text or not _EXPR_CHARS.match(text.lower()):
        raise CalcError("Only numbers, + - * / ^ % ( ) and math functions are allowed.")
    evaluator = simpleeval.SimpleEval(functions=_FUNCTIONS, names=_NAMES)
    try:
        value = evaluator.eval(text)
    except ZeroDivisionError:
        raise CalcError("Division by zero.") from None
    except (simpleeval.InvalidExpression, SyntaxError, OverflowError, ValueError, TypeError) as e:
        raise CalcError(f"Cannot evaluate {expression!r}: {e}") from None
    return Calculation(expression.strip(), _format(value))


def arithmetic(question: str) -> Calculation | None:
    """The calculation a question asks for, when it is nothing but arithmetic; else None."""
    match = _WRAPPER.match(question)
    if match is None:
        return None
    expr = match.group("expr").strip()
    normalised = normalise(expr)
    if (
        _NOT_ARITHMETIC.search(expr)
        or not _OPERATOR.search(normalised)
        or not _EXPR_CHARS.match(normalised.lower())
    ):
        return None
    words = re.findall(r"[a-z_]+", normalised.lower())
    if any(w not in _FUNCTIONS and w not in _NAMES for w in words):
        return None
    try:
        return evaluate(expr)
    except CalcError:
        return None
