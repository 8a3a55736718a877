"""The FastAPI dependencies every face's routes take: the running app's runtime and the caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from orchestrator.api.shared.security import principal_of
from orchestrator.core.principals import Principal
from orchestrator.wiring.runtime import Runtime


def get_runtime(request: Request) -> Runtime:
    """The running app's runtime."""
    runtime: Runtime = request.app.state.runtime
    return runtime


def get_principal(request: Request) -> Principal:
    """Who is calling (recorded by the token check)."""
    return principal_of(request.state)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
