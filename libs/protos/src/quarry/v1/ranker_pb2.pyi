from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchResult(_message.Message):
    __slots__ = ("url", "title", "snippet", "engine_rank", "engines", "published", "source")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    ENGINE_RANK_FIELD_NUMBER: _ClassVar[int]
    ENGINES_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    snippet: str
    engine_rank: int
    engines: _containers.RepeatedScalarFieldContainer[str]
    published: str
    source: str
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., snippet: _Optional[str] = ..., engine_rank: _Optional[int] = ..., engines: _Optional[_Iterable[str]] = ..., published: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class RankResultsRequest(_message.Message):
    __slots__ = ("query", "results", "top_k", "title_weight", "snippet_weight", "rrf_k")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TITLE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    query: str
    results: _containers.RepeatedCompositeFieldContainer[SearchResult]
    top_k: int
    title_weight: float
    snippet_weight: float
    rrf_k: int
    def __init__(self, query: _Optional[str] = ..., results: _Optional[_Iterable[_Union[SearchResult, _Mapping]]] = ..., top_k: _Optional[int] = ..., title_weight: _Optional[float] = ..., snippet_weight: _Optional[float] = ..., rrf_k: _Optional[int] = ...) -> None: ...

class RankedResult(_message.Message):
    __slots__ = ("result", "bm25f_score", "lexical_rank", "rrf_score", "rank")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    BM25F_SCORE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_RANK_FIELD_NUMBER: _ClassVar[int]
    RRF_SCORE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    result: SearchResult
    bm25f_score: float
    lexical_rank: int
    rrf_score: float
    rank: int
    def __init__(self, result: _Optional[_Union[SearchResult, _Mapping]] = ..., bm25f_score: _Optional[float] = ..., lexical_rank: _Optional[int] = ..., rrf_score: _Optional[float] = ..., rank: _Optional[int] = ...) -> None: ...

class RankResultsResponse(_message.Message):
    __slots__ = ("results", "total")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RankedResult]
    total: int
    def __init__(self, results: _Optional[_Iterable[_Union[RankedResult, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class Page(_message.Message):
    __slots__ = ("url", "title", "markdown")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    markdown: str
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., markdown: _Optional[str] = ...) -> None: ...

class RankChunksRequest(_message.Message):
    __slots__ = ("query", "pages", "top_k", "chunk_words", "one_per_url")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    CHUNK_WORDS_FIELD_NUMBER: _ClassVar[int]
    ONE_PER_URL_FIELD_NUMBER: _ClassVar[int]
    query: str
    pages: _containers.RepeatedCompositeFieldContainer[Page]
    top_k: int
    chunk_words: int
    one_per_url: bool
    def __init__(self, query: _Optional[str] = ..., pages: _Optional[_Iterable[_Union[Page, _Mapping]]] = ..., top_k: _Optional[int] = ..., chunk_words: _Optional[int] = ..., one_per_url: _Optional[bool] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("url", "title", "text", "score", "index")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    text: str
    score: float
    index: int
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., text: _Optional[str] = ..., score: _Optional[float] = ..., index: _Optional[int] = ...) -> None: ...

class RankChunksResponse(_message.Message):
    __slots__ = ("chunks", "total_chunks")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[Chunk]
    total_chunks: int
    def __init__(self, chunks: _Optional[_Iterable[_Union[Chunk, _Mapping]]] = ..., total_chunks: _Optional[int] = ...) -> None: ...

class PassagePage(_message.Message):
    __slots__ = ("url", "title", "markdown", "content_hash")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    markdown: str
    content_hash: str
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., markdown: _Optional[str] = ..., content_hash: _Optional[str] = ...) -> None: ...

class RankPassagesRequest(_message.Message):
    __slots__ = ("queries", "pages", "budget_tokens", "passage_words", "max_per_page", "dense")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_WORDS_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_PAGE_FIELD_NUMBER: _ClassVar[int]
    DENSE_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedScalarFieldContainer[str]
    pages: _containers.RepeatedCompositeFieldContainer[PassagePage]
    budget_tokens: int
    passage_words: int
    max_per_page: int
    dense: bool
    def __init__(self, queries: _Optional[_Iterable[str]] = ..., pages: _Optional[_Iterable[_Union[PassagePage, _Mapping]]] = ..., budget_tokens: _Optional[int] = ..., passage_words: _Optional[int] = ..., max_per_page: _Optional[int] = ..., dense: _Optional[bool] = ...) -> None: ...

class Passage(_message.Message):
    __slots__ = ("url", "title", "text", "score", "index", "tokens")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    text: str
    score: float
    index: int
    tokens: int
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., text: _Optional[str] = ..., score: _Optional[float] = ..., index: _Optional[int] = ..., tokens: _Optional[int] = ...) -> None: ...

class RankPassagesResponse(_message.Message):
    __slots__ = ("passages", "missing_urls", "total_passages", "dense", "reranked", "rerank_note")
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    MISSING_URLS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_PASSAGES_FIELD_NUMBER: _ClassVar[int]
    DENSE_FIELD_NUMBER: _ClassVar[int]
    RERANKED_FIELD_NUMBER: _ClassVar[int]
    RERANK_NOTE_FIELD_NUMBER: _ClassVar[int]
    passages: _containers.RepeatedCompositeFieldContainer[Passage]
    missing_urls: _containers.RepeatedScalarFieldContainer[str]
    total_passages: int
    dense: bool
    reranked: bool
    rerank_note: str
    def __init__(self, passages: _Optional[_Iterable[_Union[Passage, _Mapping]]] = ..., missing_urls: _Optional[_Iterable[str]] = ..., total_passages: _Optional[int] = ..., dense: _Optional[bool] = ..., reranked: _Optional[bool] = ..., rerank_note: _Optional[str] = ...) -> None: ...

class PreparePassagesRequest(_message.Message):
    __slots__ = ("queries", "pages", "passage_words", "candidates_per_page")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_WORDS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_PER_PAGE_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedScalarFieldContainer[str]
    pages: _containers.RepeatedCompositeFieldContainer[PassagePage]
    passage_words: int
    candidates_per_page: int
    def __init__(self, queries: _Optional[_Iterable[str]] = ..., pages: _Optional[_Iterable[_Union[PassagePage, _Mapping]]] = ..., passage_words: _Optional[int] = ..., candidates_per_page: _Optional[int] = ...) -> None: ...

class PreparePassagesResponse(_message.Message):
    __slots__ = ("passages", "embedded", "missing_urls", "dense")
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    MISSING_URLS_FIELD_NUMBER: _ClassVar[int]
    DENSE_FIELD_NUMBER: _ClassVar[int]
    passages: int
    embedded: int
    missing_urls: _containers.RepeatedScalarFieldContainer[str]
    dense: bool
    def __init__(self, passages: _Optional[int] = ..., embedded: _Optional[int] = ..., missing_urls: _Optional[_Iterable[str]] = ..., dense: _Optional[bool] = ...) -> None: ...

class SupportClaim(_message.Message):
    __slots__ = ("sentence", "passages")
    SENTENCE_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    sentence: str
    passages: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, sentence: _Optional[str] = ..., passages: _Optional[_Iterable[str]] = ...) -> None: ...

class CheckSupportRequest(_message.Message):
    __slots__ = ("claims",)
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[SupportClaim]
    def __init__(self, claims: _Optional[_Iterable[_Union[SupportClaim, _Mapping]]] = ...) -> None: ...

class SupportVerdict(_message.Message):
    __slots__ = ("score", "label", "best_passage")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    BEST_PASSAGE_FIELD_NUMBER: _ClassVar[int]
    score: float
    label: str
    best_passage: int
    def __init__(self, score: _Optional[float] = ..., label: _Optional[str] = ..., best_passage: _Optional[int] = ...) -> None: ...

class CheckSupportResponse(_message.Message):
    __slots__ = ("verdicts",)
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    verdicts: _containers.RepeatedCompositeFieldContainer[SupportVerdict]
    def __init__(self, verdicts: _Optional[_Iterable[_Union[SupportVerdict, _Mapping]]] = ...) -> None: ...
