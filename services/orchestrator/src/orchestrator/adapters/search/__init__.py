"""Search backends (SearXNG instances, the Brave Search API) behind one service."""
