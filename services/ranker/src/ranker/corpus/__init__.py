"""Local documents: a persistent BM25 index of documents the caller already extracted.

:mod:`.corpus` is the entry point (staging, commit, search); :mod:`.index` the immutable
searchable snapshot; :mod:`.analysis` chunking + term counts; :mod:`.storage` the on-disk
generations; :mod:`.snippet` query-dependent snippets. No transport here.
"""
