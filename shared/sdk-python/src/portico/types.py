"""Wire types of the calls the client wraps (the full list of fields is in ``/docs-json``)."""

from __future__ import annotations

from typing import Any, Dict, Generic, List, Literal, NotRequired, Optional, TypedDict, TypeVar

T = TypeVar("T")


class Person(TypedDict):
    id: str
    identityId: Optional[str]
    name: str
    document: str
    externalId: Optional[str]
    email: Optional[str]
    phone: Optional[str]
    birthDate: Optional[str]
    enrolled: bool
    enrolledAt: Optional[str]
    anonymised: bool
    createdAt: str
    updatedAt: str


class UpsertPersonResult(TypedDict):
    result: Literal["created", "updated"]
    person: Person


class EnrollResult(TypedDict):
    personId: str
    quality: float
    photos: int
    enrolled: bool
    modelId: str


class RecognisedPerson(TypedDict):
    id: str
    displayName: str


StepUpFactor = Literal["qr", "staff", "document_last4", "birth_date"]


class StepUpVia(TypedDict):
    factor: StepUpFactor


class CheckinResult(TypedDict):
    checkInId: str
    outcome: str  # success | denied | liveness_failed | geofence_alert
    reason: Optional[str]  # denied: not_recognised | step_up_failed | capacity_reached | ...
    method: str
    person: Optional[RecognisedPerson]
    eventId: Optional[str]
    score: NotRequired[Optional[float]]
    threshold: NotRequired[Optional[float]]
    livenessScore: NotRequired[Optional[float]]
    geofenceStatus: str
    occurredAt: str
    stepUp: Optional[StepUpVia]  # how a face between the lines was settled; None: the face alone


class StepUpAttempt(TypedDict):
    attemptId: str
    factors: List[StepUpFactor]
    expiresAt: str


class StepUpRequired(TypedDict):
    """Identify's answer for a face between the tenant's refuse and accept lines: nothing is recorded
    until ``Portico.step_up`` completes it (once, within 60 seconds). ``candidate`` and the scores
    only for credentialed callers."""

    outcome: Literal["step_up_required"]
    stepUp: StepUpAttempt
    eventId: Optional[str]
    candidate: NotRequired[RecognisedPerson]
    score: NotRequired[float]
    threshold: NotRequired[float]
    livenessScore: NotRequired[Optional[float]]


class Page(TypedDict, Generic[T]):
    items: List[T]
    nextCursor: Optional[str]


class WebhookEvent(TypedDict):
    """A webhook body (and bus message): ``data`` depends on ``event``; ``environment`` is
    ``"live"`` or ``"sandbox"`` (an event of the tenant's sandbox, whose ``tenantId`` is its own)."""

    id: str
    event: str
    tenantId: str
    environment: Literal["live", "sandbox"]
    timestamp: str
    data: Dict[str, Any]
