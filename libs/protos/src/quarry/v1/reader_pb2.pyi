from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReadRequest(_message.Message):
    __slots__ = ("url", "timeout_ms", "max_bytes")
    URL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    url: str
    timeout_ms: int
    max_bytes: int
    def __init__(self, url: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., max_bytes: _Optional[int] = ...) -> None: ...

class ExtractRequest(_message.Message):
    __slots__ = ("html", "url", "content_type")
    HTML_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    html: bytes
    url: str
    content_type: str
    def __init__(self, html: _Optional[bytes] = ..., url: _Optional[str] = ..., content_type: _Optional[str] = ...) -> None: ...

class ReadResponse(_message.Message):
    __slots__ = ("url", "final_url", "title", "markdown", "status", "error", "content_type", "fetched_bytes", "truncated", "elapsed_ms", "published", "site_name", "language", "http_status", "cached", "author", "tier", "render", "fetch_ms", "extract_ms")
    class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATUS_UNSPECIFIED: _ClassVar[ReadResponse.Status]
        OK: _ClassVar[ReadResponse.Status]
        EMPTY: _ClassVar[ReadResponse.Status]
        BLOCKED: _ClassVar[ReadResponse.Status]
        TOO_LARGE: _ClassVar[ReadResponse.Status]
        TIMEOUT: _ClassVar[ReadResponse.Status]
        HTTP_ERROR: _ClassVar[ReadResponse.Status]
        UNSUPPORTED: _ClassVar[ReadResponse.Status]
        NETWORK_ERROR: _ClassVar[ReadResponse.Status]
        INVALID_URL: _ClassVar[ReadResponse.Status]
    STATUS_UNSPECIFIED: ReadResponse.Status
    OK: ReadResponse.Status
    EMPTY: ReadResponse.Status
    BLOCKED: ReadResponse.Status
    TOO_LARGE: ReadResponse.Status
    TIMEOUT: ReadResponse.Status
    HTTP_ERROR: ReadResponse.Status
    UNSUPPORTED: ReadResponse.Status
    NETWORK_ERROR: ReadResponse.Status
    INVALID_URL: ReadResponse.Status
    URL_FIELD_NUMBER: _ClassVar[int]
    FINAL_URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    FETCHED_BYTES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    SITE_NAME_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    RENDER_FIELD_NUMBER: _ClassVar[int]
    FETCH_MS_FIELD_NUMBER: _ClassVar[int]
    EXTRACT_MS_FIELD_NUMBER: _ClassVar[int]
    url: str
    final_url: str
    title: str
    markdown: str
    status: ReadResponse.Status
    error: str
    content_type: str
    fetched_bytes: int
    truncated: bool
    elapsed_ms: int
    published: str
    site_name: str
    language: str
    http_status: int
    cached: bool
    author: str
    tier: str
    render: RenderInfo
    fetch_ms: int
    extract_ms: int
    def __init__(self, url: _Optional[str] = ..., final_url: _Optional[str] = ..., title: _Optional[str] = ..., markdown: _Optional[str] = ..., status: _Optional[_Union[ReadResponse.Status, str]] = ..., error: _Optional[str] = ..., content_type: _Optional[str] = ..., fetched_bytes: _Optional[int] = ..., truncated: _Optional[bool] = ..., elapsed_ms: _Optional[int] = ..., published: _Optional[str] = ..., site_name: _Optional[str] = ..., language: _Optional[str] = ..., http_status: _Optional[int] = ..., cached: _Optional[bool] = ..., author: _Optional[str] = ..., tier: _Optional[str] = ..., render: _Optional[_Union[RenderInfo, _Mapping]] = ..., fetch_ms: _Optional[int] = ..., extract_ms: _Optional[int] = ...) -> None: ...

class RenderInfo(_message.Message):
    __slots__ = ("status", "reason", "ms", "requests", "refused", "bytes")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    status: str
    reason: str
    ms: int
    requests: int
    refused: int
    bytes: int
    def __init__(self, status: _Optional[str] = ..., reason: _Optional[str] = ..., ms: _Optional[int] = ..., requests: _Optional[int] = ..., refused: _Optional[int] = ..., bytes: _Optional[int] = ...) -> None: ...

class DomainsRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class TierStats(_message.Message):
    __slots__ = ("tier", "attempts", "ok", "empty", "failed", "timeouts", "failing_streak", "last_status", "mean_ms", "mean_chars")
    TIER_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    EMPTY_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    FAILING_STREAK_FIELD_NUMBER: _ClassVar[int]
    LAST_STATUS_FIELD_NUMBER: _ClassVar[int]
    MEAN_MS_FIELD_NUMBER: _ClassVar[int]
    MEAN_CHARS_FIELD_NUMBER: _ClassVar[int]
    tier: str
    attempts: int
    ok: int
    empty: int
    failed: int
    timeouts: int
    failing_streak: int
    last_status: str
    mean_ms: int
    mean_chars: int
    def __init__(self, tier: _Optional[str] = ..., attempts: _Optional[int] = ..., ok: _Optional[int] = ..., empty: _Optional[int] = ..., failed: _Optional[int] = ..., timeouts: _Optional[int] = ..., failing_streak: _Optional[int] = ..., last_status: _Optional[str] = ..., mean_ms: _Optional[int] = ..., mean_chars: _Optional[int] = ...) -> None: ...

class DomainStats(_message.Message):
    __slots__ = ("domain", "tiers", "advice", "backoff_s")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    TIERS_FIELD_NUMBER: _ClassVar[int]
    ADVICE_FIELD_NUMBER: _ClassVar[int]
    BACKOFF_S_FIELD_NUMBER: _ClassVar[int]
    domain: str
    tiers: _containers.RepeatedCompositeFieldContainer[TierStats]
    advice: str
    backoff_s: float
    def __init__(self, domain: _Optional[str] = ..., tiers: _Optional[_Iterable[_Union[TierStats, _Mapping]]] = ..., advice: _Optional[str] = ..., backoff_s: _Optional[float] = ...) -> None: ...

class DomainsResponse(_message.Message):
    __slots__ = ("domains",)
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    domains: _containers.RepeatedCompositeFieldContainer[DomainStats]
    def __init__(self, domains: _Optional[_Iterable[_Union[DomainStats, _Mapping]]] = ...) -> None: ...
