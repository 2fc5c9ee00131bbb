"""Python client for the Portico API (standard library only)."""

__version__ = "0.1.0"

from .client import Persons, Photo, Portico, RetryPolicy
from .errors import FieldProblem, PorticoConnectionError, PorticoError, PorticoHttpError, PorticoTimeoutError, Problem
from .types import CheckinResult, EnrollResult, Page, Person, StepUpFactor, StepUpRequired, UpsertPersonResult, WebhookEvent
from .webhooks import (
    DEFAULT_TOLERANCE,
    SIGNATURE_HEADER,
    SIGNATURE_V2_HEADER,
    TIMESTAMP_HEADER,
    WebhookSignatureError,
    construct_webhook_event,
    verify_webhook_signature,
)

__all__ = [
    "CheckinResult",
    "EnrollResult",
    "FieldProblem",
    "Page",
    "Person",
    "Persons",
    "Photo",
    "Portico",
    "PorticoConnectionError",
    "PorticoError",
    "PorticoHttpError",
    "PorticoTimeoutError",
    "Problem",
    "RetryPolicy",
    "DEFAULT_TOLERANCE",
    "SIGNATURE_HEADER",
    "SIGNATURE_V2_HEADER",
    "TIMESTAMP_HEADER",
    "StepUpFactor",
    "StepUpRequired",
    "UpsertPersonResult",
    "WebhookEvent",
    "WebhookSignatureError",
    "construct_webhook_event",
    "verify_webhook_signature",
]
