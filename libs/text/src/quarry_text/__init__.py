"""Quarry's one text library: how text becomes terms, passages and rankings.

One copy of each, shared by the ranker (web pages), the index (local documents) and the
orchestrator (fusing the web's and the index's lists), so the three can never drift apart:

- :mod:`quarry_text.analyzer`: tokens, stop-words, Snowball stemming, compound terms; the
  settings record the index keeps in its manifest;
- :mod:`quarry_text.chunking` (with :mod:`quarry_text.structure`): pages into passages;
- :mod:`quarry_text.termcounts`: query-term counts and lengths as the analyser counts them;
- :mod:`quarry_text.bm25`: BM25 (bm25s, Lucene variant) and its idf; :mod:`quarry_text.bm25f`
  for short multi-field results;
- :mod:`quarry_text.rrf`: reciprocal rank fusion.

Nothing is imported here: ``quarry_text.rrf`` stays a pure-Python import for callers that
need no analyser.
"""
