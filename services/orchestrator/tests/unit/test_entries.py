"""Which entry of a reference passage a sentence's value belongs to (core/entries.py), and
the ending striking a sentence that states a neighbouring entry's value (core/ending.py)."""

from __future__ import annotations

from orchestrator.core.ending import SOURCES_DONT_SAY, conclude
from orchestrator.core.entries import entries, key, wrong_entry
from orchestrator.core.support import SentenceMark

# An ffmpeg option list: each option's default beside its neighbour's.
FFMPEG = (
    "- -min_delay integer\n"
    "- Set the minimum delay between retries, in seconds (default 2).\n"
    "- -max_delay integer\n"
    "- Set the maximum delay between retries, in seconds (default 120).\n"
    "- -default_delay integer\n"
    "- Set the delay used when the server gives none, in seconds (default 10).\n"
)
# git-config entries, gc.auto's among them.
GIT_CONFIG = (
    "- gc.auto\n"
    "- When there are approximately more than this many loose objects in the repository, "
    "git gc --auto will pack them. The default value is 6700.\n"
    "- gc.autoPackLimit\n"
    "- When there are more than this many packs that are not marked with *.keep file in "
    "the repository, git gc --auto consolidates them into one larger pack. The default value "
    "is 50. Setting this to 0 disables it.\n"
)
# gitrevisions: @{-<n>} just before @{upstream}.
REVISIONS = (
    "- *@{-<n>}*, e.g. *@{-1}*\n"
    "- The construct *@{-<n>}* means the <n>th branch/commit checked out before the current "
    "one.\n\n"
    "- *[<branchname>]@{upstream}*, e.g. *master@{upstream}*, *@{u}*\n"
    "- A branch B may be set up to build on top of a branch X at a remote R; the suffix "
    "@{upstream} to a branchname (short form <branchname>@{u}) refers to that branch.\n"
)
# A postconf snippet run into one line.
POSTCONF = (
    "…ipc_timeout (3600s) The time limit for sending or receiving information over an "
    "internal communication channel. max_idle (100s) The maximum amount of time that an idle "
    "Postfix daemon process waits for an incoming connection before terminating voluntarily."
)


def test_a_passage_is_cut_into_entries_by_the_names_that_head_them() -> None:
    assert [sorted(e.names) for e in entries(FFMPEG)] == [
        ["min_delay"],
        ["max_delay"],
        ["default_delay"],
    ]
    assert [sorted(e.names) for e in entries(REVISIONS)] == [
        ["@{-1}", "@{-}"],
        ["@{upstream}", "@{u}", "master@{upstream}"],
    ]
    assert [sorted(e.names) for e in entries(POSTCONF)] == [["ipc_timeout"], ["max_idle"]]
    assert key("[<branchname>]@{upstream}*,") == "@{upstream}"


def test_prose_is_not_a_list_of_entries() -> None:
    prose = (
        "FTS5 assumes the xToken() callback is invoked for each token in order.\n"
        "WITHOUT ROWID tables use index b-trees rather than table b-trees.\n"
        "copy/rename detection; equivalent to the git diff option -l.\n"
    )
    assert entries(prose) == []


def test_a_value_read_from_the_neighbouring_entry_is_caught() -> None:
    question = "What is the default min_delay of ffmpeg's HLS demuxer?"
    assert wrong_entry("The default `min_delay` is 10 seconds [1].", question, [FFMPEG])
    assert not wrong_entry("The default `min_delay` is 2 seconds [1].", question, [FFMPEG])


def test_an_option_that_states_no_amount_may_defer_to_another_entry() -> None:
    # git gc's --auto entry says nothing of a number: the count lives in gc.auto's entry.
    gc = (
        "- --auto\n- With this option, git gc checks whether any housekeeping is required. "
        "See the gc.auto option.\n" + GIT_CONFIG
    )
    question = "How many loose objects make git gc --auto pack them?"
    assert not wrong_entry(
        "git gc --auto packs loose objects when there are more than 6700 of them [1].",
        question,
        [gc],
    )


def test_the_entry_the_question_names_passed_over_for_another_is_caught() -> None:
    question = "What is git's default gc.auto threshold?"
    wrong = "The default value for `gc.autoPackLimit` in Git is 50 [1]."
    assert wrong_entry(wrong, question, [GIT_CONFIG])
    assert not wrong_entry("The default value of `gc.auto` is 6700 [1].", question, [GIT_CONFIG])


def test_an_entry_answering_what_another_entry_describes_is_caught() -> None:
    question = "What is the shorthand for a branch's upstream in git?"
    wrong = (
        "The shorthand for a branch's upstream in git is `@{-<n>}`, where `<n>` is the number "
        "of branches checked out before the current one [1]."
    )
    assert wrong_entry(wrong, question, [REVISIONS])
    assert not wrong_entry(
        "The shorthand for a branch's upstream in git is `@{u}` [1].", question, [REVISIONS]
    )
    # An aside naming another entry answers nothing: left alone.
    aside = "The construct `@{-<n>}` means the nth branch checked out before the current one [1]."
    assert not wrong_entry(aside, question, [REVISIONS])


def test_a_value_from_the_entry_the_question_does_not_describe_is_caught() -> None:
    question = (
        "How long does an idle Postfix daemon process wait for its next request before it exits?"
    )
    wrong = (
        "The default time limit for sending or receiving information over an internal "
        "communication channel is 3600 seconds [1]."
    )
    assert wrong_entry(wrong, question, [POSTCONF])
    right = "An idle Postfix daemon process waits 100 seconds before it exits [1]."
    assert not wrong_entry(right, question, [POSTCONF])


def test_a_question_naming_what_no_entry_defines_is_not_judged_by_its_words() -> None:
    # The question's own entry is not in the passage: its words fitting a neighbour say nothing.
    question = "What is the maximum idle time of Postfix's daemon_idle_limit?"
    assert not wrong_entry("The limit is 3600 seconds [1].", question, [POSTCONF])


def test_the_ending_strikes_a_neighbouring_entrys_value() -> None:
    question = "What is the default min_delay of ffmpeg's HLS demuxer?"
    wrong = SentenceMark("The default `min_delay` is 10 seconds [1].", [1], "supported", 0.9)
    ending = conclude(question, [wrong], {1: FFMPEG})
    assert ending.report.claims[-1].support == "unsupported"
    assert ending.note is not None
    assert SOURCES_DONT_SAY in ending.note.text
    right = SentenceMark("The default `min_delay` is 2 seconds [1].", [1], "supported", 0.9)
    kept = conclude(question, [right], {1: FFMPEG})
    assert kept.report.claims == [right]
