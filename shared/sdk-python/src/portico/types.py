"""The wire types: every schema of the service's OpenAPI document as a TypedDict (fields as the API
names them), generated into ``_generated.py``; and the webhook body."""

from __future__ import annotations

from typing import Generic, List, Literal, Optional, TypedDict, TypeVar

from ._generated import *  # noqa: F401,F403 (the generated wire types, listed in its __all__)
from ._generated import __all__ as _generated_names
from .webhooks import WebhookEvent

T = TypeVar("T")

StepUpFactor = Literal["qr", "staff", "document_last4", "birth_date"]


class Page(TypedDict, Generic[T]):
    """One page of a list (``PageIterator.page()``); ``total`` where the API counts."""

    items: List[T]
    nextCursor: Optional[str]


__all__ = [name for name in _generated_names if not name.endswith("Resource") and name != "Resources"] + [
    "Page",
    "StepUpFactor",
    "WebhookEvent",
]
