"""Verifying Portico's webhooks: ``X-Service-Signature`` is the hex HMAC-SHA256 of the exact raw body
with the tenant's webhook secret; during a secret rotation it carries two, comma-separated."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Optional, Sequence, Union, cast

from .types import WebhookEvent

SIGNATURE_HEADER = "X-Service-Signature"


class WebhookSignatureError(Exception):
    """The signature does not match the body: answer 401."""


def verify_webhook_signature(
    raw_body: Union[bytes, str],
    signature_header: Optional[str],
    secret: Union[str, Sequence[str]],
) -> bool:
    """True when one signature of the header is the HMAC of ``raw_body`` under one of the secrets.

    Pass the body exactly as received (bytes, before any JSON parsing). Give both the new and the
    previous secret while you switch over after a rotation.
    """
    if not signature_header:
        return False
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    secrets = [secret] if isinstance(secret, str) else list(secret)
    parts = [p.strip() for p in signature_header.split(",")]
    matched = False
    # Every pair is compared (constant time each, no early return), so timing says nothing.
    for s in secrets:
        expected = hmac.new(s.encode("utf-8"), body, hashlib.sha256).hexdigest()
        for part in parts:
            if hmac.compare_digest(expected.encode("ascii"), part.lower().encode("ascii", "replace")):
                matched = True
    return matched


def construct_webhook_event(
    raw_body: Union[bytes, str],
    signature_header: Optional[str],
    secret: Union[str, Sequence[str]],
) -> WebhookEvent:
    """Verifies, then parses: the event, or ``WebhookSignatureError``."""
    if not verify_webhook_signature(raw_body, signature_header, secret):
        raise WebhookSignatureError("The webhook signature does not match the body")
    return cast(WebhookEvent, json.loads(raw_body))
