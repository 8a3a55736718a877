"""A client interceptor that makes cancelling a caller cancel its RPC on the server too."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

import grpc


class CancelOnCancel(grpc.aio.UnaryUnaryClientInterceptor):
    """Wait for each unary call inside the interceptor chain, cancelling it if cancelled.

    OpenTelemetry's grpc.aio client interceptor (installed in every service process) awaits
    the call's status inside the chain's task, where a cancellation only stops the wait, not
    the RPC: the reader went on fetching a page for minutes after the question that asked for
    it was cancelled (measured in tests/e2e). Put innermost, this interceptor holds the real
    call object, so a cancellation reaching the chain cancels the RPC itself.
    """

    async def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Any],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        """Start the call, wait for its status here, cancel it on cancellation."""
        call = await continuation(client_call_details, request)
        try:
            await call.code()
        except asyncio.CancelledError:
            call.cancel()
            raise
        return call


#: Target schemes whose resolver can return several addresses (a Kubernetes headless Service
#: answers with one A record per ready pod; ``ipv4:a:1,b:2`` lists them by hand).
SPREAD_SCHEMES = ("dns:", "ipv4:", "ipv6:")
#: gRPC's default policy (pick_first) sends every call to the first address that connects, so a
#: scaled-out reader or ranker behind a headless Service would see one orchestrator's calls land
#: on one pod; round_robin keeps a connection to each address and rotates calls over them.
ROUND_ROBIN = ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))


def channel_options(address: str, options: Sequence[tuple[str, Any]] = ()) -> list[tuple[str, Any]]:
    """``options``, plus round_robin when ``address`` names a resolver scheme (``dns:///host:port``)
    and the caller set no service config of its own."""
    merged = list(options)
    spread = address.lower().startswith(SPREAD_SCHEMES)
    if spread and not any(key == ROUND_ROBIN[0] for key, _ in merged):
        merged.append(ROUND_ROBIN)
    return merged


def channel(address: str, options: Sequence[tuple[str, Any]] = ()) -> grpc.aio.Channel:
    """An insecure channel to ``address`` whose unary calls end when their caller is cancelled.

    ``dns:///reader-headless:50051`` (or ``ipv4:``/``ipv6:`` lists) spreads calls over every
    address round-robin; a plain ``host:port`` keeps gRPC's default, one connection.
    """
    made = grpc.aio.insecure_channel(
        address, options=channel_options(address, options), interceptors=[CancelOnCancel()]
    )
    if address.lower().startswith(SPREAD_SCHEMES):
        # Connect to every address now: an idle round_robin channel connects on its first call
        # and sends that call, and every call made before the other addresses are ready, to
        # whichever address answered first, so a question's parallel page reads all landed on
        # one reader (seen in tests/integration/test_multi_replica.py on CI).
        made.get_state(try_to_connect=True)
    return made
