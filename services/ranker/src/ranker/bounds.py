"""Query bounds shared by every RPC that takes a query."""

from __future__ import annotations

from quarry_text.analyzer import Analyzer

from ranker.errors import BoundExceededError

MAX_QUERY_TOKENS = 128
# 128 tokens of ordinary words fit in well under 4 KiB; far longer is not a query.
MAX_QUERY_CHARS = 4096


def check_query(analyzer: Analyzer, query: str) -> None:
    """Raise BoundExceededError when ``query`` is beyond the query bounds."""
    if len(query) > MAX_QUERY_CHARS:
        raise BoundExceededError(f"query is longer than {MAX_QUERY_CHARS} characters")
    if len(analyzer.surface_tokens(query)) > MAX_QUERY_TOKENS:
        raise BoundExceededError(f"query has more than {MAX_QUERY_TOKENS} tokens")
