"""Ranker settings, read from `RANKER_*` environment variables."""

from __future__ import annotations

from pydantic_settings import SettingsConfigDict
from quarry_common.settings import BaseServiceSettings, Port


class Settings(BaseServiceSettings):
    """Ranker configuration; built once in ``main()`` and passed down."""

    model_config = SettingsConfigDict(
        env_prefix="RANKER_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    port: Port = 50052
