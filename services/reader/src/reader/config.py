"""Reader settings, read from `READER_*` environment variables."""

from __future__ import annotations

from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port


class Settings(BaseServiceSettings):
    """Reader configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="READER_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 50051
