"""The domain policy's steps in a search round (orchestrator/core/domains.py holds the rules).

Quick search and deep research both search through ``core/ask/search.py`` and read through
``core/ask/round.py``'s ``gather``: the policy is applied there, and only there, so the two cannot
drift. Before the search the rules become ``site:`` / ``-site:`` operators the engine applies;
after it every web result is judged again (an engine may ignore an operator); after reading, a
page whose final URL (after redirects) is refused is dropped before its passages are ranked.
Each drop is listed in a `policy` event: the URL, the stage and the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.core.ask.domain import SearchHit
from orchestrator.core.ask.state import RunState
from orchestrator.core.domains import Drop, Stage


def web_query(state: RunState, query: str) -> str:
    """``query`` as the web search backend gets it: with the policy's operators."""
    operators = state.options.domains.engine_operators()
    return f"{query} {operators}" if operators else query


def announce(state: RunState, queries: Sequence[str]) -> None:
    """The `policy` event of a search step: the rules, and the operators the engine was sent."""
    policy = state.options.domains
    if policy.active:
        _emit(state, "search", [], queries=list(queries), operators=policy.engine_operators())


def keep_allowed(state: RunState, hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` without the web results the policy refuses (listed in a `policy` event)."""
    policy = state.options.domains
    if not policy.active:
        return hits
    kept: list[SearchHit] = []
    dropped: list[Drop] = []
    for hit in hits:
        drop = policy.check(hit.url, "result") if hit.source != "local" else None
        if drop is None:
            kept.append(hit)
        else:
            dropped.append(drop)
    if dropped:
        _emit(state, "result", dropped)
    return kept


def drop_redirected(state: RunState, urls: Sequence[str]) -> None:
    """Forget the pages among ``urls`` read this round whose final URL the policy refuses:
    their text is never ranked, their result never cited."""
    policy = state.options.domains
    if not policy.active:
        return
    dropped: list[Drop] = []
    for url in urls:
        page = state.pages.get(url)
        if page is None or not page.final_url or page.final_url == url:
            continue
        drop = policy.check(url, "redirect", page.final_url)
        if drop is not None:
            del state.pages[url]
            dropped.append(drop)
    if dropped:
        gone = {d.url for d in dropped}
        state.hits = [h for h in state.hits if h.url not in gone]
        _emit(state, "redirect", dropped)


def _emit(state: RunState, stage: Stage, dropped: list[Drop], **extra: object) -> None:
    state.policy_dropped += [d.as_json() for d in dropped]
    state.sink.emit(
        "policy",
        {
            "round": state.rounds,
            "stage": stage,
            "rules": state.options.domains.describe(),
            **extra,
            "dropped": [d.as_json() for d in dropped],
        },
    )
