"""Stand-ins for the web search backends and the page reader when web search is off.

The sources policy (``orchestrator.core.policy``) keeps every run away from the web; these make the
promise hold even if a code path ever slipped past it: the production wiring never builds a
search client or lets the reader fetch a URL when ``ORCHESTRATOR_WEB_SEARCH=off``, so a bug can
fail a run but cannot send a query or fetch a page.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from orchestrator.core.ask.domain import PageRead, ReaderUnavailable, SearchFailed, SearchResponse

logger = logging.getLogger(__name__)


class NoWebSearcher:
    """The ``Searcher`` of a server whose web search is off: every search fails, unsent."""

    async def search(
        self,
        query: str,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        engines: Sequence[str] | None = None,
        pageno: int = 1,
        cache: bool = True,
    ) -> SearchResponse:
        """Never searches.

        Raises:
            SearchFailed: always (kind ``config``).
        """
        logger.error("a web search was attempted while web search is off; it was not sent")
        raise SearchFailed("Web search is off (ORCHESTRATOR_WEB_SEARCH=off).", "", "config")


class NoWebReader:
    """The ``Reader`` of a server whose web search is off: no page is ever fetched."""

    async def read(self, url: str, *, timeout: float) -> PageRead:
        """Never reads.

        Raises:
            ReaderUnavailable: always (code ``web_search_off``).
        """
        logger.error("a page read was attempted while web search is off; it was not sent")
        raise ReaderUnavailable("web_search_off")
