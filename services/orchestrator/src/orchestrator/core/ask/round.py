"""One search round — search → rank → read → passages — shared by quick search
(``core/ask/loop.py``) and deep research (``core/research/dimension.py``), so the two cannot drift
apart.

Each caller keeps only what differs: quick search judges snippets while it reads and decides
when to answer; research spends its budgets and judges each iteration for gap queries. Passages
are ranked whenever there is material — pages read *or* local documents found: research used to
rank only after reading web pages, so local-only research worked from 320-character snippets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from orchestrator.core.ask import sieve
from orchestrator.core.ask.domain import SearchHit
from orchestrator.core.ask.read import chunks_step, read_pages
from orchestrator.core.ask.search import rank_step, search_step
from orchestrator.core.ask.state import RunState


async def find(
    state: RunState,
    queries: Sequence[str],
    *,
    typed: str,
    on_retry: Callable[[], None] | None = None,
) -> tuple[list[SearchHit], list[str]]:
    """Search ``queries`` in every source and keep the ranker's top results (added to
    ``state.hits``); return them with the queries that found them.

    A small model's rewrite can miss everything ("it", "not sure", measured with Gemma 3 270M):
    when the first round finds nothing, what the user ``typed`` is searched before giving up
    (``on_retry`` runs first, e.g. to spend a research search budget).

    Raises:
        RunFailed: every search failed, or no source may be searched.
    """
    used = list(queries)
    ranked = await rank_step(state, await search_step(state, used), " ".join(used))
    if not ranked and state.rounds == 1 and used != [typed]:
        if on_retry is not None:
            on_retry()
        used = [typed]
        ranked = await rank_step(state, await search_step(state, used), typed)
    state.hits.extend(ranked)
    return ranked, used


async def gather(state: RunState, urls: Sequence[str], *, speculative: bool = False) -> None:
    """Read the web pages among ``urls`` not read yet, then rank passages over everything found
    so far: every page read and every local document (whose passages the index serves).
    A page redirected to a domain the policy refuses is dropped before it is ranked."""
    await read_pages(state, urls, speculative=speculative)
    sieve.drop_redirected(state, urls)
    if state.has_material:
        await chunks_step(state)
