"""Combining the precision and recall passes (reader.passes), on hand-written pass outputs."""

from __future__ import annotations

from reader.passes import combine

# Long enough that the precision text is never under half the recall text's length.
P1, P2, P3 = (
    f"The {n} paragraph the precision pass kept. " * 4 for n in ("first", "second", "third")
)


def _md(*blocks: str) -> str:
    return "\n\n".join(blocks)


def test_precision_bounds_the_article_and_recall_fills_it() -> None:
    recall = _md("# Page title", P1, "## Section two", P2, "- one\n- two", P3, "### Popular")
    precise = _md(P1, P2, P3)
    assert combine(precise, recall) == _md(P1, "## Section two", P2, "- one\n- two", P3)


def test_a_line_precision_garbled_is_recall_s_and_its_own_lines_stay() -> None:
    recall = _md(P1, "## Five tips for the day", P2, P3)
    precise = _md(P1, "## ay", P2, "A line only precision found.", P3)
    assert combine(precise, recall) == _md(
        P1, "## Five tips for the day", P2, "A line only precision found.", P3
    )


def test_title_before_the_article_and_teasers_after_it_stay_out() -> None:
    recall = _md("# Page title", P1, P2, "### Popular on the site", "- Ten walks", "- A storm")
    precise = _md(P1, P2)
    assert combine(precise, recall) == precise


def test_lead_list_and_closing_list_of_the_article_come_back() -> None:
    recall = _md("Site name", "- lead one\n- lead two", P1, P2, "1. last one\n2. last two")
    precise = _md(P1, P2)
    assert combine(precise, recall) == _md(
        "- lead one\n- lead two", P1, P2, "1. last one\n2. last two"
    )


def test_a_list_after_dropped_boilerplate_stays_out() -> None:
    recall = _md(P1, P2, "Read more from our partners", "- partner one\n- partner two")
    assert combine(_md(P1, P2), recall) == _md(P1, P2)


def test_a_heading_goes_before_the_right_one_of_repeated_lines() -> None:
    recall = _md(P1, "Advertisement", P2, "## Where?", "Advertisement", P3)
    precise = _md(P1, "Advertisement", P2, "Advertisement", P3)
    assert combine(precise, recall) == _md(
        P1, "Advertisement", P2, "## Where?", "Advertisement", P3
    )


def test_recall_text_when_precision_lost_most_of_the_page() -> None:
    recall = _md(P1, P2, P3, "A long closing paragraph. " * 20)
    assert combine(P1, recall) == recall
