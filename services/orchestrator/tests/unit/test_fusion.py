"""Reciprocal rank fusion of the web and local result lists."""

from __future__ import annotations

from orchestrator.core.ask.domain import SearchHit
from orchestrator.core.ask.fusion import origin_of, rrf


def _hit(url: str, rank: int, source: str = "web") -> SearchHit:
    return SearchHit(url, url, "", rank, source=source)


def test_rrf_interleaves_two_lists_and_renumbers() -> None:
    web = [_hit("w1", 1), _hit("w2", 2), _hit("w3", 3)]
    local = [_hit("local:/a", 1, "local"), _hit("local:/b", 2, "local")]
    fused = rrf([web, local])
    assert [h.url for h in fused] == ["w1", "local:/a", "w2", "local:/b", "w3"]
    assert [h.engine_rank for h in fused] == [1, 2, 3, 4, 5]
    assert [h.source for h in fused] == ["web", "local", "web", "local", "web"]


def test_rrf_sums_scores_of_a_url_in_both_lists() -> None:
    a = [_hit("x", 1), _hit("shared", 2)]
    b = [_hit("y", 1), _hit("shared", 2)]
    # shared: 2/(60+2) beats x and y: 1/(60+1) each.
    assert [h.url for h in rrf([a, b])] == ["shared", "x", "y"]


def test_rrf_scores_match_the_formula() -> None:
    k = 60
    a = [_hit("p", 1), _hit("q", 2), _hit("r", 3)]
    b = [_hit("r", 1), _hit("q", 5)]
    scores = {"p": 1 / (k + 1), "q": 1 / (k + 2) + 1 / (k + 2), "r": 1 / (k + 3) + 1 / (k + 1)}
    # b's own position of q is 2 (the list's order), whatever its engine_rank says.
    expected = sorted(scores, key=lambda u: -scores[u])
    assert [h.url for h in rrf([a, b], k=k)] == expected


def test_rrf_counts_a_list_duplicate_once_and_handles_empty_lists() -> None:
    a = [_hit("p", 1), _hit("p", 2), _hit("q", 3)]
    assert [h.url for h in rrf([a, []])] == ["p", "q"]
    assert rrf([[], []]) == []


def test_origin_of() -> None:
    assert origin_of("local:/srv/a.md") == "local"
    assert origin_of("https://example.org/") == "web"
