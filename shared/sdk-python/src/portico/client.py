"""The Portico client over the standard library's HTTP (``urllib``): credentials (API key or admin
session renewed from its refresh cookie), an ``Idempotency-Key`` on every POST (the same on each retry,
so the service does the work once), retries after ``Retry-After`` or an exponential backoff (429 and 503
always; connection failures, time-outs and other 5xx when the request may be repeated: GET, PUT, DELETE
and keyed POSTs), problem answers raised as ``PorticoError``, cursor paging."""

from __future__ import annotations

import base64
import json
import http.client
import platform
import random
import socket
import time
import uuid
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

from . import __version__
from .errors import PorticoConnectionError, PorticoError, PorticoHttpError, PorticoTimeoutError, Problem, parse_retry_after
from .types import CheckinResult, EnrollResult, Page, Person, StepUpFactor, StepUpRequired, UpsertPersonResult

Photo = Union[bytes, str]
"""A JPEG or PNG: raw bytes, or already base64 text."""

_REFRESH_COOKIE = "portico_refresh"
_REPEATABLE = {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}
USER_AGENT = f"portico-sdk-python/{__version__} python/{platform.python_version()}"
_SESSION_ROUTES = {"/v1/auth/login", "/v1/auth/refresh", "/v1/auth/logout", "/v1/auth/mfa/verify"}


@dataclass
class RetryPolicy:
    #: Retries after the first attempt; 0 turns retrying off.
    max_retries: int = 3
    #: Backoff without ``Retry-After``: base * 2**attempt seconds, full jitter, capped.
    base_delay: float = 0.5
    max_delay: float = 8.0
    #: A ``Retry-After`` longer than this (seconds) is not waited for: the error is raised at once.
    max_retry_after: float = 60.0


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    body: Any


def _photo(photo: Photo) -> str:
    return photo if isinstance(photo, str) else base64.b64encode(photo).decode("ascii")


class Portico:
    """``Portico(base_url, api_key="pk_live_…")`` for integrators; ``login()`` for an admin session."""

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        access_token: Optional[str] = None,
        retry: Optional[RetryPolicy] = None,
        timeout: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        sandbox: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        """``headers`` are sent with every request; ``sandbox=True`` makes an admin session act on the
        tenant's sandbox (``x-portico-environment: sandbox``; a ``pk_test_`` key does by itself)."""
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.access_token = access_token
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._sleep = sleep
        self._rand = rand
        self._refresh_token: Optional[str] = None
        self.headers: Dict[str, str] = dict(headers or {})
        if sandbox:
            self.headers["x-portico-environment"] = "sandbox"
        self.persons = Persons(self)

    # --- transport -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """Calls any documented operation; answers the parsed JSON body (None for 204)."""
        response = self._send_with_retries(method, path, body, query)
        if 200 <= response.status < 300:
            return response.body
        raise _error_of(response)

    def _send_with_retries(self, method: str, path: str, body: Any, query: Optional[Mapping[str, Any]]) -> Response:
        method = method.upper()
        # One key for every attempt of this POST: a retry after a lost answer is then safe.
        extra = {"idempotency-key": str(uuid.uuid4())} if method == "POST" else {}
        repeatable = method in _REPEATABLE or bool(extra)
        renewed = False
        attempt = 0
        while True:
            try:
                response = self._send(method, path, body, query, extra)
            except PorticoConnectionError:
                if not repeatable or attempt >= self.retry.max_retries:
                    raise
                self._sleep(self._backoff(attempt))
                attempt += 1
                continue
            if response.status == 401 and not renewed and self._refresh_token and path not in _SESSION_ROUTES:
                renewed = True
                if self._renew():
                    response = self._send(method, path, body, query, extra)
            if not _retryable(response, repeatable) or attempt >= self.retry.max_retries:
                return response
            asked = parse_retry_after(response.headers.get("retry-after"))
            if asked is not None and asked > self.retry.max_retry_after:
                return response
            self._sleep(asked if asked is not None else self._backoff(attempt))
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        return self._rand() * min(self.retry.max_delay, self.retry.base_delay * 2**attempt)

    def _send(
        self,
        method: str,
        path: str,
        body: Any,
        query: Optional[Mapping[str, Any]],
        extra: Optional[Mapping[str, str]] = None,
    ) -> Response:
        url = self.base_url + path
        if query:
            pairs = {k: _query_value(v) for k, v in query.items() if v is not None}
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        headers = {"accept": "application/json", "user-agent": USER_AGENT, **self.headers, **(extra or {})}
        token = self.access_token or self.api_key
        if token:
            headers["authorization"] = f"Bearer {token}"
        if path.startswith("/v1/auth/") and self._refresh_token:
            headers["cookie"] = f"{_REFRESH_COOKIE}={self._refresh_token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method.upper(), headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                status, res_headers, raw = res.status, res.headers, res.read()
        except urllib.error.HTTPError as err:
            status, res_headers, raw = err.code, err.headers, err.read()
        except (TimeoutError, socket.timeout) as err:
            raise PorticoTimeoutError(method.upper(), url, self.timeout, err) from err
        except urllib.error.URLError as err:
            if isinstance(err.reason, (TimeoutError, socket.timeout)):
                raise PorticoTimeoutError(method.upper(), url, self.timeout, err) from err
            raise PorticoConnectionError(method.upper(), url, err) from err
        except (ConnectionError, http.client.HTTPException) as err:
            raise PorticoConnectionError(method.upper(), url, err) from err
        if path.startswith("/v1/auth/"):
            for line in res_headers.get_all("set-cookie") or []:
                name, _, rest = line.partition("=")
                if name.strip() == _REFRESH_COOKIE:
                    self._refresh_token = rest.split(";", 1)[0] or None
        text = raw.decode("utf-8", "replace")
        try:
            parsed: Any = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return Response(status, {k.lower(): v for k, v in res_headers.items()}, parsed)

    # --- admin session ---------------------------------------------------------------------------

    def login(self, email: str, password: str) -> Dict[str, Any]:
        """Admin login. With MFA on, answers the challenge (``mfaTicket``): finish with ``verify_mfa``."""
        answer = cast(Dict[str, Any], self.request("POST", "/v1/auth/login", {"email": email, "password": password}))
        if "accessToken" in answer:
            self.access_token = answer["accessToken"]
        return answer

    def verify_mfa(self, mfa_ticket: str, code: str) -> None:
        answer = self.request("POST", "/v1/auth/mfa/verify", {"mfaTicket": mfa_ticket, "code": code})
        if "accessToken" in answer:
            self.access_token = answer["accessToken"]

    def refresh(self) -> None:
        """Renews the access token from the refresh cookie (the client also does it on a 401)."""
        if not self._renew():
            raise PorticoHttpError(401, "The session could not be renewed: log in again")

    def logout(self) -> None:
        self.request("POST", "/v1/auth/logout")
        self.access_token = None
        self._refresh_token = None

    def _renew(self) -> bool:
        response = self._send("POST", "/v1/auth/refresh", None, None)
        if response.status != 200 or not isinstance(response.body, dict):
            self.access_token = None
            return False
        self.access_token = response.body["accessToken"]
        return True

    # --- enrollment and check-in -----------------------------------------------------------------

    def enroll(
        self,
        person_id: str,
        photo: Optional[Photo] = None,
        *,
        photos: Optional[Sequence[Photo]] = None,
    ) -> EnrollResult:
        """Enrolls one photo, or one to five photos of the same person (their mean is the template)."""
        body: Dict[str, Any] = {"personId": person_id}
        if photo is not None:
            body["frame"] = _photo(photo)
        if photos is not None:
            body["frames"] = [_photo(p) for p in photos]
        return cast(EnrollResult, self.request("POST", "/v1/public/onboarding/enroll", body))

    def identify(
        self,
        tenant_slug: str,
        photo: Photo,
        *,
        event_id: Optional[str] = None,
        device_id: Optional[str] = None,
        nonce: Optional[str] = None,
    ) -> Union[CheckinResult, StepUpRequired]:
        """Identifies the face in ``photo`` and records the check-in decision, or answers
        ``outcome == "step_up_required"`` (complete it with ``step_up``). A photo too poor to judge
        raises ``PorticoHttpError`` 422 ``face_retake`` (its ``reasons`` say what to fix)."""
        body: Dict[str, Any] = {"frame": _photo(photo)}
        for key, value in (("eventId", event_id), ("deviceId", device_id), ("nonce", nonce)):
            if value is not None:
                body[key] = value
        path = f"/v1/public/checkin/{urllib.parse.quote(tenant_slug, safe='')}/identify"
        return cast(Union[CheckinResult, StepUpRequired], self.request("POST", path, body))

    def step_up(
        self,
        tenant_slug: str,
        attempt_id: str,
        factor: StepUpFactor,
        *,
        token: Optional[str] = None,
        code: Optional[str] = None,
    ) -> CheckinResult:
        """Completes a step-up once: ``factor="qr"`` with ``token`` (the candidate's QR or invitation
        link token), ``"document_last4"`` or ``"birth_date"`` (YYYY-MM-DD) with ``code``, or ``"staff"``
        (credentialed callers only). A factor that is not the candidate's records ``step_up_failed``."""
        body: Dict[str, Any] = {"factor": factor}
        if token is not None:
            body["token"] = token
        if code is not None:
            body["code"] = code
        slug = urllib.parse.quote(tenant_slug, safe="")
        path = f"/v1/public/checkin/{slug}/step-up/{_segment(attempt_id)}"
        return cast(CheckinResult, self.request("POST", path, body))

    def paginate(self, path: str, query: Optional[Mapping[str, Any]] = None) -> Iterator[Any]:
        """Every item of a list operation, fetched page by page as the loop asks for them."""
        params = dict(query or {})
        while True:
            page = cast(Page[Any], self.request("GET", path, query=params))
            yield from page["items"]
            if not page.get("nextCursor"):
                return
            params["cursor"] = page["nextCursor"]


class Persons:
    def __init__(self, client: Portico) -> None:
        self._client = client

    def create(
        self,
        name: str,
        document: str,
        *,
        external_id: Optional[str] = None,
        email: Optional[str] = None,
        phone: Optional[str] = None,
        birth_date: Optional[str] = None,
    ) -> Person:
        body: Dict[str, Any] = {"name": name, "document": document}
        for key, value in (("externalId", external_id), ("email", email), ("phone", phone), ("birthDate", birth_date)):
            if value is not None:
                body[key] = value
        return cast(Person, self._client.request("POST", "/v1/persons", body))

    def upsert(
        self,
        external_id: str,
        name: str,
        document: str,
        *,
        email: Optional[str] = None,
        phone: Optional[str] = None,
        birth_date: Optional[str] = None,
    ) -> UpsertPersonResult:
        """Creates the person with this ``external_id``, or replaces its name and document (email, phone
        and birth date change only when given): ``{"result": "created" | "updated", "person": …}``."""
        body: Dict[str, Any] = {"externalId": external_id, "name": name, "document": document}
        for key, value in (("email", email), ("phone", phone), ("birthDate", birth_date)):
            if value is not None:
                body[key] = value
        return cast(UpsertPersonResult, self._client.request("POST", "/v1/persons/upsert", body))

    def get(self, person_id: str) -> Person:
        return cast(Person, self._client.request("GET", f"/v1/persons/{_segment(person_id)}"))

    def update(self, person_id: str, **fields: Any) -> Person:
        return cast(Person, self._client.request("PATCH", f"/v1/persons/{_segment(person_id)}", fields))

    def delete(self, person_id: str) -> None:
        self._client.request("DELETE", f"/v1/persons/{_segment(person_id)}")

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None, **filters: Any) -> Page[Person]:
        """One page, newest first, with ``total`` (the persons matching); filters as documented (``q``,
        ``externalId``, ``enrolled``, ``createdFrom``, ``createdTo``; ``sort="createdAt"`` for oldest first)."""
        return cast(Page[Person], self._client.request("GET", "/v1/persons", query={"limit": limit, "cursor": cursor, **filters}))

    def iterate(self, **filters: Any) -> Iterator[Person]:
        """Every person matching ``filters``, across pages."""
        return self._client.paginate("/v1/persons", filters)

    def send_enrollment_link(self, person_id: str) -> Dict[str, Any]:
        return cast(Dict[str, Any], self._client.request("POST", f"/v1/persons/{_segment(person_id)}/send-enrollment-link"))


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _retryable(response: Response, repeatable: bool) -> bool:
    if response.status in (429, 503):
        return True  # nothing was done
    if response.status == 409 and repeatable and "retry-after" in response.headers:
        return True  # the first request with this Idempotency-Key still runs
    return repeatable and response.status in (500, 502, 504)


def _error_of(response: Response) -> Exception:
    problem = Problem.from_body(response.body)
    if problem is None:
        return PorticoHttpError(response.status, response.body if isinstance(response.body, str) else json.dumps(response.body))
    return PorticoError(problem, parse_retry_after(response.headers.get("retry-after")))


__all__: List[str] = ["Photo", "Portico", "Persons", "RetryPolicy"]
