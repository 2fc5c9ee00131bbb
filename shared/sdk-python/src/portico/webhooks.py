"""Verifying Portico's webhooks: ``X-Service-Signature-V2`` is the hex HMAC-SHA256 of
``{X-Service-Timestamp}.{raw body}`` with the tenant's webhook secret (during a secret rotation two,
comma-separated), and the timestamp (Unix seconds, when the attempt was sent) must be within a tolerance
of now, so a captured delivery cannot be replayed later. (``X-Service-Signature``, the body's alone, is
still sent as the contract defines it; this helper checks the timestamped one.)"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Literal, Mapping, Optional, Sequence, TypedDict, Union, cast

SIGNATURE_HEADER = "X-Service-Signature"
TIMESTAMP_HEADER = "X-Service-Timestamp"
SIGNATURE_V2_HEADER = "X-Service-Signature-V2"
#: How far the timestamp may be from now, either way (seconds).
DEFAULT_TOLERANCE = 300.0


class WebhookEvent(TypedDict):
    """A webhook body (and bus message): ``data`` depends on ``event``; ``environment`` is
    ``"live"`` or ``"sandbox"`` (an event of the tenant's sandbox, whose ``tenantId`` is its own)."""

    id: str
    event: str
    tenantId: str
    environment: Literal["live", "sandbox"]
    timestamp: str
    data: Dict[str, Any]


class WebhookSignatureError(Exception):
    """The delivery is not genuine or not fresh: answer 401."""


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    getter = getattr(headers, "get", None)
    value = getter(name) if getter else None  # case-insensitive mappings (Flask, http.server, requests)
    if value is None:
        lower = name.lower()
        value = next((v for k, v in headers.items() if str(k).lower() == lower), None)
    return None if value is None else str(value)


def _refusal(
    raw_body: Union[bytes, str],
    headers: Mapping[str, Any],
    secret: Union[str, Sequence[str]],
    tolerance: float,
    now: Optional[float],
) -> Optional[str]:
    if isinstance(headers, (str, bytes)) or not hasattr(headers, "items"):
        raise TypeError("pass the request's headers (a mapping), not one header's value")
    timestamp = _header(headers, TIMESTAMP_HEADER)
    signature_header = _header(headers, SIGNATURE_V2_HEADER)
    if not timestamp or not re.fullmatch(r"\d{1,12}", timestamp) or not signature_header:
        return f"missing {TIMESTAMP_HEADER} or {SIGNATURE_V2_HEADER}"
    age = (time.time() if now is None else now) - int(timestamp)
    if abs(age) > tolerance:
        return f"the timestamp is {round(age)} s from now (tolerance {tolerance:g} s)"
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    signed = timestamp.encode("ascii") + b"." + body
    secrets = [secret] if isinstance(secret, str) else list(secret)
    parts = [p.strip().lower().encode("ascii", "replace") for p in signature_header.split(",")]
    matched = False
    # Every pair is compared (constant time each, no early return), so timing says nothing.
    for s in secrets:
        expected = hmac.new(s.encode("utf-8"), signed, hashlib.sha256).hexdigest().encode("ascii")
        for part in parts:
            if hmac.compare_digest(expected, part):
                matched = True
    return None if matched else "the signature does not match the body and timestamp"


def verify_webhook_signature(
    raw_body: Union[bytes, str],
    headers: Mapping[str, Any],
    secret: Union[str, Sequence[str]],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> bool:
    """True when one ``X-Service-Signature-V2`` signature is the HMAC of ``timestamp.raw_body`` under one
    of the secrets and the timestamp is within ``tolerance`` seconds of ``now`` (default: the clock).

    Pass the body exactly as received (bytes, before any JSON parsing) and the request's headers. Give
    both the new and the previous secret while you switch over after a rotation.
    """
    return _refusal(raw_body, headers, secret, tolerance, now) is None


def construct_webhook_event(
    raw_body: Union[bytes, str],
    headers: Mapping[str, Any],
    secret: Union[str, Sequence[str]],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Verifies, then parses: the event, or ``WebhookSignatureError`` saying why."""
    why = _refusal(raw_body, headers, secret, tolerance, now)
    if why:
        raise WebhookSignatureError(f"Webhook refused: {why}")
    return cast(WebhookEvent, json.loads(raw_body))


class WebhookHelpers:
    """``portico.webhooks.verify(...)`` and ``portico.webhooks.construct_event(...)``: the functions
    above on the client (the same as the TypeScript SDK's ``webhooks.verify``/``constructEvent``)."""

    def verify(
        self,
        raw_body: Union[bytes, str],
        headers: Mapping[str, Any],
        secret: Union[str, Sequence[str]],
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        now: Optional[float] = None,
    ) -> bool:
        """See ``verify_webhook_signature``."""
        return verify_webhook_signature(raw_body, headers, secret, tolerance=tolerance, now=now)

    def construct_event(
        self,
        raw_body: Union[bytes, str],
        headers: Mapping[str, Any],
        secret: Union[str, Sequence[str]],
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        now: Optional[float] = None,
    ) -> WebhookEvent:
        """See ``construct_webhook_event``."""
        return construct_webhook_event(raw_body, headers, secret, tolerance=tolerance, now=now)
