from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
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
    __slots__ = ("url", "final_url", "title", "markdown", "status", "error", "content_type", "fetched_bytes", "truncated", "elapsed_ms", "published", "site_name", "language", "http_status", "cached", "author")
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
    def __init__(self, url: _Optional[str] = ..., final_url: _Optional[str] = ..., title: _Optional[str] = ..., markdown: _Optional[str] = ..., status: _Optional[_Union[ReadResponse.Status, str]] = ..., error: _Optional[str] = ..., content_type: _Optional[str] = ..., fetched_bytes: _Optional[int] = ..., truncated: _Optional[bool] = ..., elapsed_ms: _Optional[int] = ..., published: _Optional[str] = ..., site_name: _Optional[str] = ..., language: _Optional[str] = ..., http_status: _Optional[int] = ..., cached: _Optional[bool] = ..., author: _Optional[str] = ...) -> None: ...
