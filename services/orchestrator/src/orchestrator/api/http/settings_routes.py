"""``GET``/``PATCH /v1/settings``: the settings a user may change at run time (overrides.py).

A change is validated, stored, and applied to the next question without a restart: the runtime
is wired again from the changed settings (wiring/runtime.py ``rewire``); questions already running
finish on the settings they started with. Only an admin may change settings once there are
users (with no tokens configured the single local user is one).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request

from orchestrator import overrides
from orchestrator.api.http.models import Problem
from orchestrator.api.shared.deps import PrincipalDep, RuntimeDep
from orchestrator.overrides import SettingsForbidden, SettingsInvalid, SettingsPatch
from orchestrator.wiring.runtime import Runtime

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["settings"])
_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "content": {"application/problem+json": {}}}
    for code in (400, 401, 403, 413, 415, 422, 429)
}


async def _overridden(runtime: Runtime) -> set[str]:
    if runtime.settings_db is None:
        return set()
    return set(await runtime.settings_db.load())


@router.get("/settings", responses=_PROBLEMS)
async def get_settings(runtime: RuntimeDep, who: PrincipalDep) -> dict[str, Any]:
    """The settings in force (secrets only as set / not set), which are overridden, the
    environment variable behind each, and what leaves the machine with them."""
    overridden = await _overridden(runtime)
    return overrides.view(runtime.deps.settings, overridden, editable=who.admin)


@router.patch("/settings", responses=_PROBLEMS)
async def patch_settings(
    body: SettingsPatch, request: Request, runtime: RuntimeDep, who: PrincipalDep
) -> dict[str, Any]:
    """Change settings (``null`` resets one to the environment's value); the next question
    uses them."""
    if not who.admin:
        raise SettingsForbidden("Only an admin may change settings.")
    if runtime.settings_db is None or runtime.defaults is None or runtime.rewire is None:
        raise SettingsInvalid("This server's settings cannot be changed at run time.")
    changed, reset = body.split()
    async with runtime.settings_lock:
        stored = await runtime.settings_db.load()
        merged = {k: v for k, v in (stored | changed).items() if k not in reset}
        updated = overrides.apply(runtime.defaults, merged)
        await runtime.settings_db.save(changed, reset, who.id)
        fresh = runtime.rewire(updated)
        request.app.state.runtime = fresh
    # Names only: a value may be a secret.
    logger.info("settings changed", extra={"changed": sorted(changed), "reset": sorted(reset)})
    return overrides.view(fresh.deps.settings, set(merged), editable=True)
