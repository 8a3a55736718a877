"""Messages that need no search: greetings, thanks, goodbyes and questions about the conversation.

Not an LLM call: a small classifier on the local sentence embedder (``smalltalk_model``) decides
in a few milliseconds, and a search for "thanks!" would only send the user's small talk to a
search engine for nothing. Anything it does not recognise goes through the planner as usual.

The embedder (all-MiniLM-L6-v2, ``quarry_embed``) is loaded in this process: about 1 s and
~155 MB resident, once; the ranker's copy is in another process and is busy embedding pages
while questions start. Without the model (not installed, unreadable), the whole-message
patterns of ``smalltalk_rules`` decide instead, with a warning in the log.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from orchestrator.core.ask import smalltalk_rules
from orchestrator.core.ask.smalltalk_model import Classifier
from orchestrator.core.ask.smalltalk_rules import Kind

logger = logging.getLogger(__name__)

__all__ = ["Kind", "classify", "classify_sync", "preload"]

_lock = threading.Lock()
_loaded = False
_model: Classifier | None = None


def _load() -> Classifier | None:
    """The trained classifier, built once per process; None when the embedder is missing."""
    global _loaded, _model
    with _lock:
        if not _loaded:
            _model = _build()
            _loaded = True
        return _model


def _build() -> Classifier | None:
    # Imported here: the model runtime is optional, and loading it is the slow part.
    try:
        from quarry_embed import Embedder, EmbedderUnavailable
    except ImportError as err:
        logger.warning("small talk: the embedder is not installed; using patterns (%s)", err)
        return None
    try:
        embedder = Embedder.load(threads=1)
    except EmbedderUnavailable as err:
        logger.warning("small talk: embedding model unavailable; using patterns (%s)", err)
        return None
    try:
        return Classifier.train(embedder.embed)
    # onnxruntime raises its own error types; any failure here means "use the patterns".
    except Exception as err:  # noqa: BLE001
        logger.warning("small talk: training the classifier failed; using patterns (%s)", err)
        return None


def classify_sync(message: str) -> Kind | None:
    """The kind of small talk ``message`` is, or None when it should be searched (blocking:
    the first call loads the model)."""
    model = _load()
    if model is None:
        return smalltalk_rules.classify(message)
    return model.classify(message)


async def classify(message: str) -> Kind | None:
    """:func:`classify_sync` off the event loop (the embedding is CPU work)."""
    return await asyncio.to_thread(classify_sync, message)


async def preload() -> None:
    """Load and train the classifier now (at startup), not on the first question."""
    await asyncio.to_thread(_load)
