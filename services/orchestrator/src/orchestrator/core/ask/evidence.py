"""What the model sees as sources: ranked passages grouped by page, plus the best snippets; pure.

Two shapes (ORCHESTRATOR_EVIDENCE):

* ``passages``: each page's chosen passages best first (a passage that continues another
  follows it), one source per page (the page whose passage ranked best first); the page's
  search snippet follows its best passage when the passages do not contain it, and the best
  snippets of pages without passages follow as sources of their own. A source cut to a size
  (:func:`fit`) loses its weakest text, and its ``passages`` are exactly the texts kept.
  Snippets often hold the answer outright (an engine picks them for the query), so they are
  kept beside the passages rather than replaced by them.
* ``chunk_per_url``: one chunk per page, cut to ``CHUNK_CHARS`` (the behaviour the eval
  harness compares against).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from orchestrator.core.ask.domain import Evidence, Passage, SearchHit

# The cut the chunk_per_url shape applies to each chunk (was prompts.MAX_SOURCE_CHARS).
CHUNK_CHARS = 2000
CHARS_PER_TOKEN = 4
# Passages always get at least this much, however many snippets are kept.
MIN_PASSAGE_TOKENS = 256
# Between two passages of one page that are not adjacent.
GAP = "\n\n[…]\n\n"
# The end of a sentence: a full stop, "!" or "?" before a space or the end.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
# A local passage shown as a search result's snippet (to the snippet judge and the ranker).
SNIPPET_CHARS = 320


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` for budgeting (characters / 4), as the ranker estimates them."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def chunk_per_url(chunks: Sequence[Passage]) -> list[Evidence]:
    """One source per chunk, cut to CHUNK_CHARS."""
    out = []
    for c in chunks:
        text = _clip(c.text, CHUNK_CHARS)
        out.append(Evidence(c.url, c.title, text, "chunk", (text,)))
    return out


def snippets_for(hits: Sequence[SearchHit], limit: int) -> list[SearchHit]:
    """The best ``limit`` hits that have a snippet, one per URL, in the given order."""
    seen: set[str] = set()
    out = []
    for h in hits:
        if h.snippet.strip() and h.url not in seen:
            seen.add(h.url)
            out.append(h)
            if len(out) == limit:
                break
    return out


def snippet_tokens(hits: Sequence[SearchHit]) -> int:
    """The budget the kept snippets take."""
    return sum(estimate_tokens(h.snippet) for h in hits)


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _runs(passages: Sequence[Passage]) -> list[list[Passage]]:
    """A page's passages (given best first) as runs: each passage not placed yet opens a run,
    followed by the chosen passages that continue it on the page; best first, yet a passage
    that continues another (the ranker picks a strong passage's successor) follows it."""
    by_index = {p.index: p for p in passages}
    runs: list[list[Passage]] = []
    placed: set[int] = set()
    for p in passages:
        if p.index in placed:
            continue
        run = []
        i = p.index
        while i in by_index and i not in placed:
            run.append(by_index[i])
            placed.add(i)
            i += 1
        runs.append(run)
    return runs


def _page_source(passages: list[Passage], snippet: SearchHit | None) -> tuple[str, tuple[str, ...]]:
    """A page's text, best first: the run of passages holding its best passage, the search
    snippet (unless the passages hold it), then the other runs by rank, so a cut by
    :func:`fit` drops the weakest text, never the best.

    Only the page's own words: the text is also what the user's source card shows (its
    excerpt), so nothing addressed to the model (labels, instructions) belongs in it; the
    prompt's fence already names the source's title and URL.
    """
    runs = [[p.text.strip() for p in run] for run in _runs(passages)]
    blocks = ["\n\n".join(run) for run in runs]
    parts = [t for run in runs for t in run]
    body = GAP.join(blocks)
    if snippet is not None and _squash(snippet.snippet) not in _squash(body):
        lead = snippet.snippet.strip()
        blocks.insert(1, lead)
        parts.insert(len(runs[0]), lead)
        return GAP.join(blocks), tuple(parts)
    return body, tuple(parts)


def from_passages(passages: Sequence[Passage], snippets: Sequence[SearchHit]) -> list[Evidence]:
    """Sources: pages with passages (``passages`` best first; the best page first), then
    snippet-only pages."""
    by_url: dict[str, list[Passage]] = {}
    for p in passages:
        by_url.setdefault(p.url, []).append(p)
    snippet_of = {h.url: h for h in snippets}
    out = []
    for url, group in by_url.items():
        text, parts = _page_source(group, snippet_of.get(url))
        pages = tuple(sorted({p.page for p in group if p.page}))
        out.append(Evidence(url, group[0].title, text, "passages", parts, pages=pages))
    for h in snippets:
        if h.url not in by_url:
            out.append(Evidence(h.url, h.title, h.snippet.strip(), "snippet", (h.snippet.strip(),)))
    return out


def cut_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, at a sentence end when one is near, so the LLM
    does not see half a sentence."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind(".\n"))
    return head[: end + 1] if end > limit // 2 else head[: limit - 1].rstrip() + "…"


def fit(item: Evidence, limit: int) -> Evidence:
    """``item`` within ``limit`` characters, its ``passages`` exactly the texts kept.

    A source's parts are in its text's order, best first (:func:`from_passages`): whole parts
    are dropped from the end; when even the first does not fit, it is cut.
    """
    if len(item.text) <= limit:
        return item
    kept: list[str] = []
    end = 0
    for part in item.passages:
        at = item.text.find(part, end)
        if at < 0 or at + len(part) > limit:
            break
        kept.append(part)
        end = at + len(part)
    if kept:
        return replace(item, text=item.text[:end], passages=tuple(kept))
    text = cut_text(item.text, limit)
    if not item.passages:
        return replace(item, text=text)
    # The first part, cut: what precedes it in the text (a label) stays in the text only.
    lead = max(0, item.text.find(item.passages[0]))
    return replace(item, text=text, passages=(text[lead:] or text,))


def _plain(text: str) -> str:
    # Whitespace collapsed and markdown escapes ("SQLITE\\_MAX") dropped, for matching.
    return " ".join(text.replace("\\", "").split())


def complete_snippet(snippet: str, page: str, extra: int = SNIPPET_CHARS) -> str:
    """``snippet`` finished from ``page`` (the text of the page it came from) when it stops
    mid-sentence: search engines cut snippets at a length, often just before the value the
    question asks for ("The default is …"). Its last words are found in the page and the
    sentence is completed, up to ``extra`` characters; a snippet not found is kept as is."""
    text = snippet.strip()
    bare = text.rstrip("….").rstrip() if text.endswith(("…", "...")) else text
    if not bare or (bare == text and bare.endswith((".", "!", "?", ":"))):
        return text
    tail = _plain(bare)[-60:]
    flat = _plain(page)
    at = flat.find(tail)
    if len(tail) < 20 or at < 0:
        return text
    rest = flat[at + len(tail) : at + len(tail) + extra]
    m = _SENTENCE_END.search(rest)
    if m is None:
        return text
    return _plain(bare) + rest[: m.start() + 1]


def snippet_of(text: str, limit: int = SNIPPET_CHARS) -> str:
    """A passage's opening as a search snippet: whole sentences when one ends near ``limit``."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = head.rfind(". ")
    return head[: end + 1] if end > limit // 2 else head.rstrip() + "…"


def within_budget(passages: Sequence[Passage], budget_tokens: int) -> list[Passage]:
    """The passages that fit ``budget_tokens`` in order (one too long is skipped, not cut)."""
    out: list[Passage] = []
    left = budget_tokens
    for p in passages:
        cost = estimate_tokens(p.text)
        if cost <= left:
            out.append(p)
            left -= cost
    return out
