"""Can the question be searched as asked? A deterministic prefilter beside the planner's verdict.

Why: the embedded 1.5B model asked "What documents are you referring to?" back for "How do I
make Quarry search my own documents?" (issue 14). A small model must not decide alone whether
to question the user back, so the code decides what it can:

* ``clear``: nothing points outside the question and it names something (however short:
  "Rust ownership", "Explain photosynthesis" are topic queries, searched as a search engine
  would): it is searched as asked; a model's "clarify" is overruled.
* ``candidate``: a first question that points at something ("is it safe …") but also names
  things: the model's verdict decides. A pronoun after the question has named three things
  ("… the ffmpeg command refresh the progress line it prints") points back inside it: clear.
* ``unresolved``: a first question whose only subject is a pronoun or deixis ("How tall is
  it?", "tell me more about that"): nothing can be searched, so the engine asks back even
  when the model would proceed.

With history a pronoun is resolved against the earlier turns, never asked back: the rewrite
must name the referent, and when the model's rewrite still has only the bare pronoun the
previous turn's subject is appended (``resolve_query``). A follow-up with no pronoun that
leans on the last question all the same ("And in winter?" after "How cold is Oslo in
summer?") gets that question's key terms, but not the ones it replaces ("summer" after the
same "in"): ``carry_context``. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Verdict = Literal["clear", "candidate", "unresolved"]

# Straight and curly apostrophes both join a word ("it's", "it\u2019s").
_WORD_RE = re.compile("[A-Za-z][A-Za-z'\u2019-]*|\\d+")
# Pronouns that always point at something said before.
_PRONOUN_TEXT = """
    it its itself they them their theirs themselves he him his she her hers
"""
_PRONOUNS = frozenset(_PRONOUN_TEXT.split())
# Demonstratives: referring when they stand alone ("what does that mean"), not when they are
# determiners or relative pronouns after a noun ("the folder that Quarry indexes").
_DEMONSTRATIVES = frozenset(["this", "that", "these", "those"])
# A demonstrative right after one of these words stands for something (it is not a relative
# pronoun after a noun).
_BEFORE_TEXT = """
    is was are were be does do did about of for with on in to what why how when where who
    explain describe and or but than like mean means
"""
_BEFORE_REFERRING = frozenset(_BEFORE_TEXT.split())
_PHRASES = (
    "the other one",
    "the other ones",
    "the same one",
    "the former",
    "the latter",
    "the first one",
    "the second one",
    "the last one",
)
# Words that carry no subject of their own: function words, question words and the generic
# verbs of follow-up talk ("tell me more about it").
_GENERIC_TEXT = """
    a an the and or but if then than so of in on at to for from by with without about into over
    under after before between through during as is are was were be been being am do does did
    done have has had having it its this that these those there here which who whom whose what
    when where why how not no can could may might must shall should will would i you he she we
    they them his her their our your my me us him itself some any each every all both more most
    much many few one ones other another else s tell explain describe know say said mean means
    meant happen happened happens work works thing things stuff please give show detail details
    info information like same former latter first second last again also ok okay really true
    get go make use used let anything something everything take takes took
"""
_GENERIC = frozenset(_GENERIC_TEXT.split())
# Question openers that are capitalised only because they start the sentence.
_OPENERS = _GENERIC | frozenset(["list", "compare", "define", "name", "find"])


class TurnLike(Protocol):
    """What the prefilter needs of an earlier turn."""

    @property
    def question(self) -> str: ...


@dataclass(frozen=True)
class Prefilter:
    """The deterministic reading of one question."""

    verdict: Verdict
    # The words that point outside the question ("it", "that", "the other one").
    referring: tuple[str, ...]
    # Words that name a subject (not function words, not generic follow-up verbs).
    content: tuple[str, ...]
    words: int

    @property
    def needs_rewrite(self) -> bool:
        """Whether the question points at something and so must be rewritten before search."""
        return bool(self.referring)


def _words(text: str) -> list[str]:
    return [w.lower().replace("\u2019", "'") for w in _WORD_RE.findall(text)]


def referring_words(text: str) -> tuple[str, ...]:
    """The pronouns, standalone demonstratives and phrases in ``text`` that point elsewhere."""
    words = _words(text)
    found: list[str] = []
    for i, word in enumerate(words):
        base = word.removesuffix("'s")
        if base in _PRONOUNS:
            found.append(base)
        elif word in _DEMONSTRATIVES:
            before = words[i - 1] if i else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if not after or before in _BEFORE_REFERRING or after in ("one", "ones"):
                found.append(word)
        elif word == "there" and i == len(words) - 1:
            found.append(word)  # "how do I get there?", not "is there a way …"
    lowered = " ".join(words)
    found += [p for p in _PHRASES if p in lowered]
    return tuple(dict.fromkeys(found))


def content_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that name a subject, in order, without repeats."""
    return tuple(dict.fromkeys(w for w in _words(text) if w.removesuffix("'s") not in _GENERIC))


def prefilter(question: str, *, has_history: bool) -> Prefilter:
    """Read ``question`` (see the module doc for the three verdicts)."""
    referring = referring_words(question)
    content = content_words(question)
    words = len(_words(question))
    verdict: Verdict = "clear"
    if has_history:
        verdict = "clear"  # pronouns resolve against the history (resolve_query)
    elif (referring and len(content) <= 1) or (words <= 2 and not content):
        verdict = "unresolved"
    elif referring and not _named_before(question, referring):
        # A short question without a pronoun is a topic query: Qwen 1.5B asked "What is Rust
        # ownership?" back for "Rust ownership" in one run of make test-models, and searched
        # it in another; the engine searches it every time.
        verdict = "candidate"
    return Prefilter(verdict, referring, content, words)


# Content words before a question's first pronoun from which it names its own antecedent.
ANTECEDENT_WORDS = 3


def _named_before(question: str, referring: Sequence[str]) -> bool:
    """Whether the question names enough before its first referring word for that word to
    point back inside it: "How often does the ffmpeg command refresh the progress line it
    prints?" (the embedded model asked it back, 2026-11-27), not "Is it safe to …"."""
    words = _words(question)
    first = next((i for i, w in enumerate(words) if w.removesuffix("'s") in referring), len(words))
    before = [w for w in words[:first] if w.removesuffix("'s") not in _GENERIC]
    return len(dict.fromkeys(before)) >= ANTECEDENT_WORDS


def subject_of(text: str) -> str:
    """The subject of an earlier question: its names with the nouns right after them
    ("Karvik saltbread", "Karvik-Holm ferry crossing"), else its content words."""
    phrases: list[list[str]] = []
    run: list[str] = []
    for i, raw in enumerate(_WORD_RE.findall(text)):
        word = raw.lower()
        named = raw[:1].isupper() and not (i == 0 and word in _OPENERS) and word not in _GENERIC
        if named or (run and word not in _GENERIC):
            run.append(raw)
        elif run:
            phrases.append(run)
            run = []
    if run:
        phrases.append(run)
    if phrases:
        return " ".join(" ".join(p) for p in phrases)
    return " ".join(content_words(text))


def resolve_query(query: str, history: Sequence[TurnLike]) -> str:
    """``query`` with a bare pronoun's referent added from the newest earlier turn.

    The model's rewrite is kept when it names something beyond the pronoun that the
    earlier turn talked about; otherwise the earlier question's subject is appended.
    """
    if not history or not referring_words(query):
        return query
    for turn in reversed(history):
        subject = subject_of(turn.question)
        if not subject:
            continue
        named = {w.lower() for w in _WORD_RE.findall(subject)}
        if named & set(_words(query)):
            return query
        return f"{query.strip()} {subject}"
    return query


# How an elliptical follow-up opens ("And in winter?", "What about Bergen?").
_ELLIPTIC_OPENERS = ("and ", "or ", "but ", "what about ", "how about ", "also ", "then ")
# Words after which the next one fills a slot a follow-up may refill ("in summer" -> "in
# winter"): prepositions, and comparison words.
_SLOTS_TEXT = """
    in on at for from to by with without during before after since until of about than vs
    versus under over
"""
_SLOTS = frozenset(_SLOTS_TEXT.split())


def elliptical(question: str) -> bool:
    """Whether ``question`` leans on an earlier turn without naming it: it opens like a
    continuation ("And …", "What about …") or with a preposition ("In winter?", "With
    --force?"), or names nothing at all ("Why?", "How so?"). A short topic query ("Rust
    ownership") or a whole question ("What is the capital of France?") stands alone."""
    lowered = " ".join(question.lower().split())
    if lowered.startswith(_ELLIPTIC_OPENERS):
        return True
    words = _words(question)
    return bool(words) and (words[0] in _SLOTS or not content_words(question))


def _replaced(question: str, earlier: str) -> set[str]:
    """Words of ``earlier`` that ``question`` refills: the word after a slot word (a
    preposition) both use ("in summer" / "in winter" -> {"summer"})."""
    new, old = _words(question), _words(earlier)
    slots = {w for i, w in enumerate(new[:-1]) if w in _SLOTS}
    return {old[i + 1] for i, w in enumerate(old[:-1]) if w in slots}


def carry_context(query: str, question: str, history: Sequence[TurnLike]) -> str:
    """``query`` with the last question's key terms appended when ``question`` is an
    elliptical follow-up (no pronoun; those go through ``resolve_query``) and ``query``
    names none of them yet (a planner's rewrite usually does)."""
    if not history or referring_words(question) or not elliptical(question):
        return query
    earlier = history[-1].question
    first, *_ = _WORD_RE.findall(earlier) or [""]
    # A follow-up that names something of its own ("What about Bergen?") replaces the
    # earlier names ("Oslo") and keeps the rest ("cold", "summer").
    renamed = any(w[:1].isupper() for w in _WORD_RE.findall(question)[1:])
    replaced = _replaced(question, earlier)
    key = [
        raw
        for raw in dict.fromkeys(_WORD_RE.findall(earlier))
        if len(raw) > 1
        and raw.lower() not in _GENERIC
        and raw.lower() not in replaced
        and not (renamed and raw[:1].isupper() and raw != first)
    ]
    have = set(_words(query))
    if not key or any(w.lower() in have for w in key if w.lower() not in _words(question)):
        return query  # the query (a planner's rewrite) names the earlier subject already
    carried = [w for w in key if w.lower() not in have]
    return f"{query.strip()} {' '.join(carried)}" if carried else query


def clarifying_question(pre: Prefilter) -> str:
    """A question back to the user when the engine, not the model, decides to ask."""
    if pre.referring:
        return f"What does “{pre.referring[0]}” refer to? Please name what you are asking about."
    return "Could you say a little more about what you would like to know?"
