"""Citation checking on hand-made answers and sources."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from orchestrator.core.citations import (
    SUPPORT_THRESHOLD,
    check_citations,
    content_words,
    support,
)

EIFFEL_HEIGHT = (
    "The Eiffel Tower is 330 metres tall. It was the tallest man-made structure in the world "
    "until the Chrysler Building was finished in New York in 1930."
)
EIFFEL_HISTORY = (
    "The Eiffel Tower was built by Gustave Eiffel's company for the 1889 World's Fair in Paris. "
    "Critics at the time called the tower an eyesore."
)
PARIS = "Paris is the capital and most populous city of France, with 2.1 million residents."
SOURCES = [(1, EIFFEL_HEIGHT), (2, EIFFEL_HISTORY), (3, PARIS)]


def score(sentence: str, source: str) -> float:
    return support(content_words(sentence), content_words(source))


def test_threshold_separates_support_from_same_topic_sources() -> None:
    # the calibration the module docstring cites
    verbatim = "The Eiffel Tower is 330 metres tall."
    paraphrase = "Gustave Eiffel's company built the tower for the 1889 World's Fair."
    assert score(verbatim, EIFFEL_HEIGHT) == 1.0
    assert score(paraphrase, EIFFEL_HISTORY) >= 0.6
    assert score(verbatim, EIFFEL_HISTORY) <= 0.4  # same topic, not the fact
    assert score(paraphrase, EIFFEL_HEIGHT) <= 0.4
    assert score(verbatim, EIFFEL_HISTORY) < SUPPORT_THRESHOLD < score(paraphrase, EIFFEL_HISTORY)


def test_correct_citations_are_kept_unchanged() -> None:
    answer = "The Eiffel Tower is 330 metres tall [1]. It was built for the 1889 World's Fair [2]."
    report = check_citations(answer, SOURCES)
    assert report.text == answer
    assert report.cited == [1, 2]
    assert (report.removed_citations, report.replaced, report.added) == ([], [], [])


def test_number_without_a_source_is_removed() -> None:
    answer = "Critics called it an eyesore [2][9]. Paris has 2.1 million residents [3]."
    report = check_citations(answer, SOURCES)
    assert report.text == "Critics called it an eyesore [2]. Paris has 2.1 million residents [3]."
    assert report.removed_citations == [9]
    assert report.cited == [2, 3]


def test_wrong_citation_is_replaced_by_the_supporting_source() -> None:
    answer = "The Eiffel Tower is 330 metres tall [3]."
    report = check_citations(answer, SOURCES)
    assert report.text == "The Eiffel Tower is 330 metres tall [1]."
    assert report.replaced == [(3, 1)]
    assert report.cited == [1]


def test_unsupported_citation_without_a_better_source_is_removed() -> None:
    answer = "The tower is painted bright green every spring [2]. It is in Paris [3]."
    report = check_citations(answer, SOURCES)
    assert report.text == "The tower is painted bright green every spring. It is in Paris [3]."
    assert report.removed_citations == [2]


def test_group_forms_are_understood_and_normalised() -> None:
    answer = (
        "The Eiffel Tower is 330 metres tall and was built for the 1889 World's Fair in Paris "
        "[1, 2]. Paris is the capital of France [Source 3]. The tower was built for the 1889 "
        "fair [1-3]."
    )
    report = check_citations(answer, SOURCES)
    assert "in Paris [1][2]." in report.text
    assert "capital of France [3]." in report.text
    # of 1..3 only source 2 supports the last sentence
    assert report.text.endswith("built for the 1889 fair [2].")
    assert report.removed_citations == [1, 3]


def test_citation_after_the_full_stop_belongs_to_that_sentence() -> None:
    answer = "Paris is the capital of France. [3] The tower is 330 metres tall. [2]"
    report = check_citations(answer, SOURCES)
    assert report.text == "Paris is the capital of France. [3] The tower is 330 metres tall. [1]"
    assert report.replaced == [(2, 1)]


def test_uncited_sentences_get_the_best_supporting_source() -> None:
    answer = (
        "Critics at the time called the tower an eyesore. The Eiffel Tower is 330 metres tall. "
        "The weather was nice."
    )
    report = check_citations(answer, SOURCES)
    assert report.text == (
        "Critics at the time called the tower an eyesore [2]. "
        "The Eiffel Tower is 330 metres tall [1]. The weather was nice."
    )
    assert report.added == [2, 1]
    assert report.cited == [1, 2]


def test_a_tie_between_supporting_sources_cites_the_first() -> None:
    # "eiffel tower famous": both Eiffel sources hold 2 of its 3 content words.
    report = check_citations("The Eiffel Tower is famous.", SOURCES)
    assert report.text == "The Eiffel Tower is famous [1]."
    assert report.added == [1]


def test_short_sentences_keep_existing_citations_and_empty_input_is_fine() -> None:
    assert check_citations("Yes [1].", SOURCES).text == "Yes [1]."
    assert check_citations("", SOURCES).cited == []
    report = check_citations("Nothing cites [1].", [])
    assert report.text == "Nothing cites."
    assert report.removed_citations == [1]


def test_years_in_brackets_and_decimals_do_not_confuse_sentences() -> None:
    answer = "Paris has 2.1 million residents [3]. Built in [1889]."
    report = check_citations(answer, SOURCES)
    assert report.text.startswith("Paris has 2.1 million residents [3].")
    assert report.cited == [3]


def test_each_citation_may_be_backed_by_its_own_clause() -> None:
    answer = (
        "The Eiffel Tower is 330 metres tall [1], it was built for the 1889 World's Fair [2], "
        "and Paris has 2.1 million residents [3]."
    )
    report = check_citations(answer, SOURCES)
    assert report.text == answer
    assert report.cited == [1, 2, 3]
    wrong = "The tower is 330 metres tall [2], and Paris has 2.1 million residents [3]."
    fixed = check_citations(wrong, SOURCES)
    assert (
        fixed.text == "The tower is 330 metres tall [1], and Paris has 2.1 million residents [3]."
    )
    assert fixed.replaced == [(2, 1)]


@given(
    st.lists(
        st.sampled_from(
            [
                "The Eiffel Tower is 330 metres tall",
                "Paris is the capital of France",
                "Critics called the tower an eyesore",
                "It is green",
                " [1]",
                " [2]",
                "[3]",
                " [7]",
                " [1, 3]",
                " [1-2]",
                " [1000]",
                " [" + "1" + "0" * 5000 + "]",
                ". ",
                "\n",
                ", ",
                "? ",
            ]
        ),
        max_size=14,
    )
)
def test_any_answer_is_checked_into_a_stable_text_with_valid_numbers(pieces: list[str]) -> None:
    report = check_citations("".join(pieces), SOURCES)
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", report.text)}
    assert numbers <= {1, 2, 3}
    assert set(report.cited) == numbers
    again = check_citations(report.text, SOURCES)
    assert again.text == report.text


def test_a_runaway_number_is_dropped_not_kept_or_recorded() -> None:
    # Seen from Gemma 3 270M in a report: "[1000…0]" with hundreds of zeros, which a
    # three-digit pattern never saw as a citation, so it reached the report unchecked.
    runaway = "[1" + "0" * 5000 + "]"
    answer = f"The Eiffel Tower is 330 metres tall [1] {runaway}. Paris is the capital [1234]."
    report = check_citations(answer, SOURCES)
    assert re.findall(r"\[(\d+)\]", report.text) == ["1", "3"]
    assert report.removed_citations == [1234]
