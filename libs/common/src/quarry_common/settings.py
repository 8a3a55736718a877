"""Base settings shared by every service, and a loader that fails with a one-line message."""

from __future__ import annotations

import sys
from typing import Annotated, Literal, TypeVar

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

#: A TCP port; 0 asks the OS for a free one (tests use it).
Port = Annotated[int, Field(ge=0, le=65535)]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

#: Exit status for a configuration error, as the Foundation issue asks (same as a usage error).
EXIT_BAD_CONFIG = 2


class BaseServiceSettings(BaseSettings):
    """Settings every service has; subclasses set ``env_prefix`` (e.g. ``READER_``)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", env_ignore_empty=True)

    host: str = "127.0.0.1"
    port: Port = 0
    log_level: LogLevel = "INFO"
    shutdown_grace_s: float = Field(default=3.0, ge=0, le=60)


SettingsT = TypeVar("SettingsT", bound=BaseSettings)


def env_name(settings_cls: type[BaseSettings], loc: tuple[int | str, ...]) -> str:
    """Return the environment variable that feeds the field at ``loc``."""
    if not loc:
        return "(settings)"
    field_name = str(loc[0])
    aliases = {f.validation_alias for f in settings_cls.model_fields.values() if f.validation_alias}
    if field_name in aliases:  # pydantic reports an aliased field by its alias: the env name
        return field_name.upper()
    field = settings_cls.model_fields.get(field_name)
    if field is not None and isinstance(field.validation_alias, str):
        return field.validation_alias.upper()
    prefix = str(settings_cls.model_config.get("env_prefix", ""))
    return f"{prefix}{field_name}".upper()


def describe_error(settings_cls: type[BaseSettings], err: ValidationError) -> str:
    """Format a settings ValidationError as one line naming each bad variable."""
    parts = []
    for e in err.errors():
        parts.append(f"{env_name(settings_cls, e['loc'])}: {e['msg']} (got {e.get('input')!r})")
    return "invalid configuration: " + "; ".join(parts)


def load_settings(settings_cls: type[SettingsT]) -> SettingsT:
    """Build settings from the environment, or exit 2 with a one-line error on stderr."""
    try:
        return settings_cls()
    except ValidationError as err:
        sys.stderr.write(describe_error(settings_cls, err) + "\n")
        raise SystemExit(EXIT_BAD_CONFIG) from None
