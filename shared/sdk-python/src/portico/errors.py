"""Every error the service answers is problem+json (RFC 9457) with a stable ``code``."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class FieldProblem:
    path: str
    message: str


@dataclass(frozen=True)
class Problem:
    type: str
    title: str
    status: int
    code: str
    detail: str
    request_id: str
    errors: List[FieldProblem] = field(default_factory=list)
    #: Fields some problems add (e.g. `quality` and `required` of `face_quality_too_low`).
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_body(cls, body: Any) -> Optional["Problem"]:
        if not isinstance(body, dict) or not isinstance(body.get("code"), str):
            return None
        known = {"type", "title", "status", "code", "detail", "requestId", "errors"}
        return cls(
            type=str(body.get("type", "about:blank")),
            title=str(body.get("title", "")),
            status=int(body.get("status", 0)),
            code=body["code"],
            detail=str(body.get("detail", "")),
            request_id=str(body.get("requestId", "")),
            errors=[FieldProblem(str(e.get("path", "")), str(e.get("message", ""))) for e in body.get("errors") or []],
            extra={k: v for k, v in body.items() if k not in known},
        )


class PorticoError(Exception):
    """A problem answer of the service: branch on ``code`` (e.g. ``not_found``, ``rate_limited``)."""

    def __init__(self, problem: Problem, retry_after: Optional[float] = None) -> None:
        super().__init__(f"{problem.title}: {problem.detail}" if problem.detail else problem.title)
        self.problem = problem
        self.status = problem.status
        self.code = problem.code
        self.request_id = problem.request_id
        #: Seconds the service asked to wait (429 and 503 answers), when it said.
        self.retry_after = retry_after


class PorticoHttpError(Exception):
    """An answer that is not problem+json (a proxy's page, a cut connection): no ``code`` to give."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:200]}")
        self.status = status
        self.body = body


class PorticoConnectionError(Exception):
    """No answer: the connection failed or dropped (after the client's retries, when the request could be repeated)."""

    def __init__(self, method: str, url: str, cause: BaseException) -> None:
        super().__init__(f"{method} {url}: connection failed ({cause})")
        self.method = method
        self.url = url


class PorticoTimeoutError(PorticoConnectionError):
    """No answer within the client's ``timeout`` (seconds)."""

    def __init__(self, method: str, url: str, timeout: float, cause: BaseException) -> None:
        super().__init__(method, url, cause)
        self.args = (f"{method} {url}: no answer within {timeout} s (timeout)",)
        self.timeout = timeout


def parse_retry_after(header: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not header:
        return None
    header = header.strip()
    if header.isdigit():
        return float(header)
    try:
        at = email.utils.parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))
