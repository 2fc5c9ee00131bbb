"""Python client for the Portico API (standard library only)."""

__version__ = "0.1.0"

from ._call import OMIT, PageIterator, Photo, RequestOptions
from .client import Portico, RetryPolicy
from .errors import FieldProblem, PorticoConnectionError, PorticoError, PorticoHttpError, PorticoTimeoutError, Problem
from .types import CheckinResult, EnrollResult, IdentifyResult, Page, Person, StepUpFactor, StepUpRequired, UpsertPersonResult, WebhookEvent
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
    "IdentifyResult",
    "OMIT",
    "Page",
    "PageIterator",
    "Person",
    "Photo",
    "Portico",
    "PorticoConnectionError",
    "PorticoError",
    "PorticoHttpError",
    "PorticoTimeoutError",
    "Problem",
    "RequestOptions",
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
