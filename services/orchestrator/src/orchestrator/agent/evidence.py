"""What the model sees as sources: ranked passages grouped by page, plus the best snippets; pure.

Two shapes (ORCHESTRATOR_EVIDENCE):

* ``passages``: each page's chosen passages in reading order, one source per page (the page
  whose passage ranked best first); the page's search snippet leads its source when the
  passages do not contain it, and the best snippets of pages without passages follow as
  sources of their own. Snippets often hold the answer outright (an engine picks them for
  the query), so they are kept beside the passages rather than replaced by them.
* ``chunk_per_url``: one chunk per page, cut to ``CHUNK_CHARS`` (the behaviour the eval
  harness compares against).
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.agent.domain import Evidence, Passage, SearchHit

# The cut the chunk_per_url shape applies to each chunk (was prompts.MAX_SOURCE_CHARS).
CHUNK_CHARS = 2000
CHARS_PER_TOKEN = 4
# Passages always get at least this much, however many snippets are kept.
MIN_PASSAGE_TOKENS = 256
# Between two passages of one page that are not adjacent.
GAP = "\n\n[…]\n\n"
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


def _page_source(passages: list[Passage], snippet: SearchHit | None) -> tuple[str, tuple[str, ...]]:
    """A page's text: its snippet (unless the passages hold it), then passages in order.

    Only the page's own words: the text is also what the user's source card shows (its
    excerpt), so nothing addressed to the model (labels, instructions) belongs in it; the
    prompt's fence already names the source's title and URL.
    """
    ordered = sorted(passages, key=lambda p: p.index)
    parts: list[str] = []
    body = ""
    for prev, p in zip([None, *ordered], ordered, strict=False):
        if prev is not None:
            body += "\n\n" if p.index == prev.index + 1 else GAP
        body += p.text.strip()
        parts.append(p.text.strip())
    if snippet is not None and _squash(snippet.snippet) not in _squash(body):
        lead = snippet.snippet.strip()
        return f"{lead}\n\n{body}", (lead, *parts)
    return body, tuple(parts)


def from_passages(passages: Sequence[Passage], snippets: Sequence[SearchHit]) -> list[Evidence]:
    """Sources: pages with passages (best page first), then snippet-only pages."""
    by_url: dict[str, list[Passage]] = {}
    for p in passages:
        by_url.setdefault(p.url, []).append(p)
    snippet_of = {h.url: h for h in snippets}
    out = []
    for url, group in by_url.items():
        text, parts = _page_source(group, snippet_of.get(url))
        out.append(Evidence(url, group[0].title, text, "passages", parts))
    for h in snippets:
        if h.url not in by_url:
            out.append(Evidence(h.url, h.title, h.snippet.strip(), "snippet", (h.snippet.strip(),)))
    return out


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
