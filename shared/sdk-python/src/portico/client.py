"""The Portico client over the standard library's HTTP (``urllib``): credentials (API key or admin
session renewed from its refresh cookie), an ``Idempotency-Key`` on every POST (the same on each retry,
so the service does the work once), retries after ``Retry-After`` or an exponential backoff (429 and 503
always; connection failures, time-outs and other 5xx when the request may be repeated: GET, PUT, DELETE
and keyed POSTs), problem answers raised as ``PorticoError``, cursor paging."""

from __future__ import annotations

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
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, Union, cast

from . import __version__
from ._call import OMIT, RequestOptions, _Omitted, present
from ._call import multipart as _multipart
from ._generated import Resources
from .errors import PorticoConnectionError, PorticoError, PorticoHttpError, PorticoTimeoutError, Problem, parse_retry_after

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


class Portico(Resources):
    """``Portico(base_url, api_key="pk_live_…")`` for integrators; ``login()`` for an admin session.

    The API's resources are attributes: ``persons``, ``enrollment``, ``checkin``, ``events``,
    ``guests``, ``applications`` (``applications.keys``), ``tenants``, ``checkins``, ``webhooks``
    (generated from the service's OpenAPI document, the same as the TypeScript SDK's)."""

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
        environment: Optional[Literal["live", "sandbox"]] = None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        """``headers`` are sent with every request, whatever the credential; ``environment="sandbox"``
        (or ``sandbox=True``) makes an admin session act on the tenant's sandbox (sent as
        ``x-portico-environment``; a ``pk_test_`` key does by itself, and naming the other environment
        than a key's is refused with 400)."""
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.access_token = access_token
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._sleep = sleep
        self._rand = rand
        self._refresh_token: Optional[str] = None
        self.headers: Dict[str, str] = dict(headers or {})
        if sandbox or environment:
            self.headers["x-portico-environment"] = environment or "sandbox"
        self._init_resources(self)

    # --- transport -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        *,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        content: Optional[Tuple[bytes, str]] = None,
    ) -> Any:
        """Calls any documented operation by its path; answers the parsed JSON body (None for 204).
        ``headers`` are sent with this call only; ``content`` is a raw body and its content type."""
        if content is None and body is not None:
            content = (json.dumps(body).encode("utf-8"), "application/json")
        response = self._send_with_retries(method, path, content, query, dict(headers or {}), timeout)
        if 200 <= response.status < 300:
            return response.body
        raise _error_of(response)

    def call(
        self,
        method: str,
        template: str,
        *,
        params: Mapping[str, str],
        body: Optional[Mapping[str, Any]] = None,
        query: Optional[Mapping[str, Any]] = None,
        multipart: Union[bool, str] = False,
        filename: Any = OMIT,
        options: Optional[RequestOptions] = None,
    ) -> Any:
        """One resource call (``portico.persons.create(...)`` and the others run through it): the path
        template filled in, the arguments given sent as the JSON body (or ``multipart/form-data`` for an
        upload) and the query."""
        path = template
        for name, value in params.items():
            path = path.replace("{" + name + "}", _segment(value))
        fields = present(body or {})
        content: Optional[Tuple[bytes, str]] = None
        # ``multipart="file"``: a JSON body unless a file is given (persons' import takes either).
        if multipart is True or (isinstance(multipart, str) and multipart in fields):
            name = "import.csv" if isinstance(filename, _Omitted) else str(filename)
            content = _multipart({k: v for k, v in fields.items() if k == "file" or multipart is True}, name)
        elif body is not None:
            content = (json.dumps(fields).encode("utf-8"), "application/json")
        extra = dict((options or {}).get("headers") or {})
        key = (options or {}).get("idempotency_key")
        if key:
            extra["idempotency-key"] = key
        return self.request(method, path, None, present(query or {}), headers=extra, timeout=(options or {}).get("timeout"), content=content)

    def _send_with_retries(
        self,
        method: str,
        path: str,
        content: Optional[Tuple[bytes, str]],
        query: Optional[Mapping[str, Any]],
        extra: Dict[str, str],
        timeout: Optional[float],
    ) -> Response:
        method = method.upper()
        # One key for every attempt of this POST (a caller's own kept): a retry after a lost answer is then safe.
        if method == "POST" and not any(k.lower() == "idempotency-key" for k in extra):
            extra["idempotency-key"] = str(uuid.uuid4())
        repeatable = method in _REPEATABLE or any(k.lower() == "idempotency-key" for k in extra)
        renewed = False
        attempt = 0
        while True:
            try:
                response = self._send(method, path, content, query, extra, timeout)
            except PorticoConnectionError:
                if not repeatable or attempt >= self.retry.max_retries:
                    raise
                self._sleep(self._backoff(attempt))
                attempt += 1
                continue
            if response.status == 401 and not renewed and self._refresh_token and path not in _SESSION_ROUTES:
                renewed = True
                if self._renew():
                    response = self._send(method, path, content, query, extra, timeout)
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
        content: Optional[Tuple[bytes, str]],
        query: Optional[Mapping[str, Any]],
        extra: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
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
        if content is not None:
            data, headers["content-type"] = content
        wait = self.timeout if timeout is None else timeout
        req = urllib.request.Request(url, data=data, method=method.upper(), headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=wait) as res:
                status, res_headers, raw = res.status, res.headers, res.read()
        except urllib.error.HTTPError as err:
            status, res_headers, raw = err.code, err.headers, err.read()
        except (TimeoutError, socket.timeout) as err:
            raise PorticoTimeoutError(method.upper(), url, wait, err) from err
        except urllib.error.URLError as err:
            if isinstance(err.reason, (TimeoutError, socket.timeout)):
                raise PorticoTimeoutError(method.upper(), url, wait, err) from err
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


__all__: List[str] = ["Portico", "RetryPolicy"]
