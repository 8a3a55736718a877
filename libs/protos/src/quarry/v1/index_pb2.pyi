from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Document(_message.Message):
    __slots__ = ("id", "title", "markdown", "content_hash", "size", "mtime_ns", "kind")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MTIME_NS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    markdown: str
    content_hash: str
    size: int
    mtime_ns: int
    kind: str
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., markdown: _Optional[str] = ..., content_hash: _Optional[str] = ..., size: _Optional[int] = ..., mtime_ns: _Optional[int] = ..., kind: _Optional[str] = ...) -> None: ...

class DocumentInfo(_message.Message):
    __slots__ = ("id", "content_hash", "size", "mtime_ns", "title", "kind", "chunks", "indexed_at", "pages")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MTIME_NS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    id: str
    content_hash: str
    size: int
    mtime_ns: int
    title: str
    kind: str
    chunks: int
    indexed_at: str
    pages: int
    def __init__(self, id: _Optional[str] = ..., content_hash: _Optional[str] = ..., size: _Optional[int] = ..., mtime_ns: _Optional[int] = ..., title: _Optional[str] = ..., kind: _Optional[str] = ..., chunks: _Optional[int] = ..., indexed_at: _Optional[str] = ..., pages: _Optional[int] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("id_prefix",)
    ID_PREFIX_FIELD_NUMBER: _ClassVar[int]
    id_prefix: str
    def __init__(self, id_prefix: _Optional[str] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents",)
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentInfo]
    def __init__(self, documents: _Optional[_Iterable[_Union[DocumentInfo, _Mapping]]] = ...) -> None: ...

class IndexDocumentsRequest(_message.Message):
    __slots__ = ("upsert", "remove_ids")
    UPSERT_FIELD_NUMBER: _ClassVar[int]
    REMOVE_IDS_FIELD_NUMBER: _ClassVar[int]
    upsert: _containers.RepeatedCompositeFieldContainer[Document]
    remove_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, upsert: _Optional[_Iterable[_Union[Document, _Mapping]]] = ..., remove_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class IndexDocumentsResponse(_message.Message):
    __slots__ = ("upserted", "removed", "pending")
    UPSERTED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    upserted: int
    removed: int
    pending: int
    def __init__(self, upserted: _Optional[int] = ..., removed: _Optional[int] = ..., pending: _Optional[int] = ...) -> None: ...

class CommitCorpusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CorpusStats(_message.Message):
    __slots__ = ("documents", "chunks", "pending", "committed_at", "embedded", "embedding_model")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    documents: int
    chunks: int
    pending: int
    committed_at: str
    embedded: int
    embedding_model: str
    def __init__(self, documents: _Optional[int] = ..., chunks: _Optional[int] = ..., pending: _Optional[int] = ..., committed_at: _Optional[str] = ..., embedded: _Optional[int] = ..., embedding_model: _Optional[str] = ...) -> None: ...

class SearchCorpusRequest(_message.Message):
    __slots__ = ("query", "top_k")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    query: str
    top_k: int
    def __init__(self, query: _Optional[str] = ..., top_k: _Optional[int] = ...) -> None: ...

class DocumentHit(_message.Message):
    __slots__ = ("id", "title", "snippet", "rank", "score")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    snippet: str
    rank: int
    score: float
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., snippet: _Optional[str] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ...) -> None: ...

class SearchCorpusResponse(_message.Message):
    __slots__ = ("results", "documents")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[DocumentHit]
    documents: int
    def __init__(self, results: _Optional[_Iterable[_Union[DocumentHit, _Mapping]]] = ..., documents: _Optional[int] = ...) -> None: ...

class GetDocumentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class SearchPassagesRequest(_message.Message):
    __slots__ = ("queries", "top_k", "max_per_document", "id_prefix", "rrf_k", "id_prefixes")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    ID_PREFIX_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    ID_PREFIXES_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedScalarFieldContainer[str]
    top_k: int
    max_per_document: int
    id_prefix: str
    rrf_k: int
    id_prefixes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, queries: _Optional[_Iterable[str]] = ..., top_k: _Optional[int] = ..., max_per_document: _Optional[int] = ..., id_prefix: _Optional[str] = ..., rrf_k: _Optional[int] = ..., id_prefixes: _Optional[_Iterable[str]] = ...) -> None: ...

class IndexPassage(_message.Message):
    __slots__ = ("document_id", "document_title", "text", "index", "score", "lexical_rank", "dense_rank", "page")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_RANK_FIELD_NUMBER: _ClassVar[int]
    DENSE_RANK_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    document_title: str
    text: str
    index: int
    score: float
    lexical_rank: int
    dense_rank: int
    page: int
    def __init__(self, document_id: _Optional[str] = ..., document_title: _Optional[str] = ..., text: _Optional[str] = ..., index: _Optional[int] = ..., score: _Optional[float] = ..., lexical_rank: _Optional[int] = ..., dense_rank: _Optional[int] = ..., page: _Optional[int] = ...) -> None: ...

class SearchPassagesResponse(_message.Message):
    __slots__ = ("passages", "retrieval", "documents")
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    passages: _containers.RepeatedCompositeFieldContainer[IndexPassage]
    retrieval: str
    documents: int
    def __init__(self, passages: _Optional[_Iterable[_Union[IndexPassage, _Mapping]]] = ..., retrieval: _Optional[str] = ..., documents: _Optional[int] = ...) -> None: ...
