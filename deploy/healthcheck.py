"""Container health probe: ``grpc HOST:PORT`` asks grpc.health.v1; ``http URL`` expects a 200.

Shipped in every service image as /app/healthcheck.py and run by the image's HEALTHCHECK and by
compose. It uses what the image already has (grpcio-health-checking is a quarry-common dependency;
urllib is stdlib), so no grpc_health_probe binary or curl has to be pulled, pinned and patched.
Exit status 0 means healthy, 1 unhealthy; one line on stderr says why.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

TIMEOUT_S = 2.0


def check_grpc(target: str, service: str = "") -> str | None:
    """Return None when ``target`` reports SERVING for ``service``, else the reason."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT_S)
        except grpc.RpcError as err:
            return f"grpc health {target}: {err.code().name}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return f"grpc health {target}: {status}"
    return None


def check_http(url: str) -> str | None:
    """Return None when GET ``url`` answers 200, else the reason."""
    if not url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
        return f"refusing to probe a non-loopback URL: {url}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as reply:  # noqa: S310 (loopback only)
            status = int(reply.status)
    except urllib.error.HTTPError as err:
        return f"GET {url}: {err.code} {err.read(300).decode(errors='replace')}"
    except OSError as err:
        return f"GET {url}: {err}"
    return None if status == 200 else f"GET {url}: {status}"


def main(argv: list[str]) -> int:
    """Run one probe; print the reason and return 1 when it fails."""
    if len(argv) >= 2 and argv[0] == "grpc":
        problem = check_grpc(argv[1], argv[2] if len(argv) > 2 else "")
    elif len(argv) == 2 and argv[0] == "http":
        problem = check_http(argv[1])
    else:
        sys.stderr.write("usage: healthcheck.py grpc HOST:PORT [SERVICE] | http URL\n")
        return 2
    if problem is not None:
        sys.stderr.write(problem + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
