"""Texts in batches under a deadline: the one loop behind the ranker's dense pass and passage
preparation (ranker/passages.py) and the reranker's unit embedding (quarry_rerank).

Embedding runs in batches so a caller's deadline is checked between them: a busy machine must
not push a call past its caller's time, and a small call must still complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence


def batches(
    texts: Sequence[str],
    size: int,
    *,
    until: float,
    stop: Callable[[], bool] = lambda: False,
    first_free: bool = False,
) -> Iterator[list[str]]:
    """``texts`` in order, ``size`` at a time, while ``time.monotonic()`` has not passed
    ``until`` and ``stop()`` is False, both checked before each batch; ``first_free``: the
    first batch comes whatever the time (so a small call completes)."""
    if size < 1:
        raise ValueError("size must be >= 1")
    for start in range(0, len(texts), size):
        if not (first_free and start == 0) and (stop() or time.monotonic() > until):
            return
        yield list(texts[start : start + size])
