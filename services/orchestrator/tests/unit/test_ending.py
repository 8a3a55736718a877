"""How a checked answer ends (orchestrator/core/ending.py): as written, or with the engine
saying the sources don't say."""

from __future__ import annotations

from orchestrator.core.ending import (
    DRAFT_LABEL,
    SOURCES_DONT_SAY,
    conclude,
    names,
    uncovered,
)
from orchestrator.core.support import SentenceMark, mark_sentence

KEEPALIVE = (
    "KeepAliveTimeout Directive. Description: Amount of time the server will wait for subsequent "
    "requests on a persistent connection. Default: KeepAliveTimeout 5. The number of seconds "
    "Apache httpd will wait for a subsequent request before closing the connection."
)
H2 = (
    "H2MaxSessionStreams Directive. Description: Maximum number of active streams per HTTP/2 "
    "session. Default: H2MaxSessionStreams 100. This directive sets the maximum number of "
    "active streams per HTTP/2 session (e.g. connection) that the server allows."
)
SOURCES = {1: KEEPALIVE, 2: H2}


def test_the_names_a_question_asks_about_are_flags_dotted_caps_and_camel_case_names() -> None:
    assert list(names("What is the default of httpd's H3MaxStreams directive?")) == ["h3maxstreams"]
    assert names("What does ffmpeg's -gpu_threads option default to?") == {
        "gpu_threads": "-gpu_threads"
    }
    # The longest name wins: not "autoPackLimit" inside "gc.autoPackLimit".
    assert names("What is the default value of gc.autoPackLimit?") == {
        "gc.autopacklimit": "gc.autoPackLimit"
    }
    assert names("Which directive turns on HTTP/3 over QUIC?") == {
        "http/3": "HTTP/3",
        "quic": "QUIC",
    }
    assert names("From which moment does the julianday() function count days?") == {
        "julianday": "julianday()"
    }
    # Numbers, versions and plain words are not names.
    assert names("Which SQLite version after 3.32.0 added it, e.g. for tables?") == {}


def test_a_name_no_source_mentions_is_uncovered_whatever_its_case_or_escapes() -> None:
    assert uncovered("What is the default of H3MaxStreams?", SOURCES) == ["H3MaxStreams"]
    assert uncovered("What is the default of h2maxsessionstreams?", SOURCES) == []
    assert uncovered("What does gc\\_auto do?", {1: "gc_auto is 6700"}) == []
    assert uncovered("What is the default of H3MaxStreams?", {}) == []  # no sources: not ours


def test_an_answer_its_sources_back_ends_as_written() -> None:
    marks = [mark_sentence("The KeepAliveTimeout default is 5 seconds [1].", SOURCES)]
    assert marks[0].support == "supported"
    ending = conclude("What is the default KeepAliveTimeout?", marks, SOURCES)
    assert ending.note is None
    assert ending.report.sentences == marks


def test_a_confident_answer_about_a_name_no_source_mentions_becomes_the_engines_abstention() -> (
    None
):
    # The small model's answer to a question about a directive that does not exist: a
    # confident default, cited to a neighbouring page that shares every other word.
    cited = SentenceMark("H3MaxStreams defaults to 100 streams [2].", [2], "supported", 0.9)
    ending = conclude("What is the default of httpd's H3MaxStreams directive?", [cited], SOURCES)
    assert ending.note is not None
    first, label, draft = ending.report.sentences
    assert first.text.startswith(SOURCES_DONT_SAY)
    assert "`H3MaxStreams`" in first.text
    assert label.text == DRAFT_LABEL
    assert (draft.support, draft.citations) == ("unsupported", [])
    assert "[2]" not in draft.text
    assert ending.report.score == 0.0


def test_a_backed_answer_keeps_its_claims_and_says_which_part_no_source_mentions() -> None:
    backed = mark_sentence("The KeepAliveTimeout default is 5 seconds [1].", SOURCES)
    guessed = SentenceMark("QUIC is off by default [2].", [2], "partly", 0.5)
    ending = conclude(
        "What is the KeepAliveTimeout default, and is QUIC on?", [backed, guessed], SOURCES
    )
    assert ending.note is not None
    assert "don't mention `QUIC`" in ending.note.text
    kept, unbacked, note = ending.report.sentences
    assert kept == backed
    assert (unbacked.support, unbacked.citations) == ("unsupported", [])
    assert note == ending.note


def test_an_answer_whose_claims_are_all_unsupported_says_the_sources_dont_say() -> None:
    wrong = mark_sentence("The KeepAliveTimeout default is 300 seconds [1].", SOURCES)
    assert wrong.support == "unsupported"
    ending = conclude("What is the default KeepAliveTimeout?", [wrong], SOURCES)
    assert ending.note is not None
    assert ending.report.sentences[0].text.startswith(SOURCES_DONT_SAY)
    assert ending.report.unsupported


def test_a_backed_sentence_does_not_save_an_answer_about_a_name_no_source_mentions() -> None:
    # The model describes H3MaxStreams with a sentence copied from the H2 page: that sentence
    # is backed, but not one of the question's names is in the sources.
    about = SentenceMark("H3MaxStreams limits streams per connection.", [], "unsupported", 0.1)
    copied = mark_sentence(
        "This directive sets the maximum number of active streams per HTTP/2 session [2].",
        SOURCES,
    )
    assert copied.support == "supported"
    ending = conclude("What does H3MaxStreams limit?", [about, copied], SOURCES)
    assert ending.report.sentences[0].text.startswith(SOURCES_DONT_SAY)


PARTS = [
    "What is the KeepAliveTimeout default?",
    "How many streams may an HTTP/2 session have at once?",
]
TWO_THINGS = (
    "What is the KeepAliveTimeout default, and how many streams may an HTTP/2 session have at once?"
)


def test_a_part_of_a_two_part_question_no_backed_sentence_speaks_to_is_named() -> None:
    # The model answered the part it had a source for and guessed the other, uncited.
    backed = mark_sentence("The KeepAliveTimeout default is 5 seconds [1].", SOURCES)
    guessed = SentenceMark(" An HTTP/2 session may have 64 streams.", [], "unsupported", 0.0)
    ending = conclude(TWO_THINGS, [backed, guessed], SOURCES, PARTS)
    assert ending.note is not None
    assert ending.note.text.strip() == f"The sources found don't answer: {PARTS[1]}"
    assert ending.report.sentences[:2] == [backed, guessed]
    # Both parts spoken to by backed sentences: the answer ends as written.
    streams = mark_sentence(
        " The maximum number of active streams per HTTP/2 session is 100 [2].", SOURCES
    )
    assert streams.support == "supported"
    assert conclude(TWO_THINGS, [backed, streams], SOURCES, PARTS).note is None
    # A question asking one thing has no parts to speak to.
    assert conclude(TWO_THINGS, [backed, guessed], SOURCES).note is None
