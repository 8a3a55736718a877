"""Webhook signatures: HMAC-SHA256 over the timestamp and the exact body sent.

The header reads ``t=<unix seconds>,v1=<hex digest>`` where the digest is
HMAC-SHA256(secret, f"{t}.{body}"): a receiver recomputes it with the schedule's secret, compares
in constant time and refuses old timestamps, so a captured delivery cannot be replayed later.
(The shape Stripe and others use, so receivers' existing code fits.)
"""

from __future__ import annotations

import hashlib
import hmac

HEADER = "X-Quarry-Signature"
EVENT_HEADER = "X-Quarry-Event"
DELIVERY_HEADER = "X-Quarry-Delivery"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify(secret: str, header: str, body: bytes, now: int, tolerance_s: int = 300) -> bool:
    """Whether ``header`` signs ``body`` with ``secret`` within ``tolerance_s`` of ``now``."""
    fields = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    try:
        timestamp = int(fields.get("t", ""))
    except ValueError:
        return False
    if abs(now - timestamp) > tolerance_s:
        return False
    expected = sign(secret, timestamp, body).split("v1=", 1)[1]
    return hmac.compare_digest(expected, fields.get("v1", ""))
