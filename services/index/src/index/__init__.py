"""The index service: local documents, chunked into passages, BM25 + dense, persisted.

:mod:`.corpus` is the entry point (staging, commit, search); :mod:`.snapshot` the immutable
searchable snapshot; :mod:`.analysis` chunking + term counts; :mod:`.storage` the on-disk
generations; :mod:`.snippet` query-dependent snippets; :mod:`.dense` the embedder port and
its loader; :mod:`.passages` hybrid passage search. :mod:`.service` and :mod:`.server` are
the gRPC transport.
"""
