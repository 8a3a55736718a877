"""Scheduled research (docs/schedules.md: /v1/schedules) and the webhooks it calls."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ScheduleSettings(BaseModel):
    """Scheduled research and webhooks (ORCHESTRATOR_SCHEDULE_*, ORCHESTRATOR_WEBHOOK_*); a part
    of ``Settings``."""

    # How often each replica looks for due schedules and finished scheduled runs.
    schedule_poll_s: float = Field(default=30.0, ge=1, le=3600)
    # The shortest interval between two firings a schedule may ask for.
    schedule_min_interval_s: float = Field(default=900.0, ge=60, le=86_400 * 7)
    schedule_max_per_owner: int = Field(default=50, ge=1, le=10_000)
    # Webhooks: private, loopback, CGNAT and ULA addresses are refused unless this is on (a
    # receiver on the LAN); link-local (cloud metadata) and reserved addresses always are.
    webhook_allow_private: bool = False
    webhook_timeout_s: float = Field(default=10.0, gt=0, le=120)
    webhook_attempts: int = Field(default=4, ge=1, le=10)
    # The first retry's wait; each next one doubles (with jitter), at most 60 s.
    webhook_backoff_s: float = Field(default=1.0, ge=0, le=60)
