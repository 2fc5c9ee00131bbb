"""What the generated resource calls (``_generated.py``) run on: arguments left out (``OMIT``), per-call
options, photos given as bytes, multipart uploads and the auto-paginating iterator of list calls. The
TypeScript SDK's ``src/resource-call.ts`` is its twin."""

from __future__ import annotations

import base64
import uuid
from typing import TYPE_CHECKING, Any, Dict, Generic, Iterator, List, Mapping, Optional, Tuple, TypedDict, TypeVar, Union, cast

if TYPE_CHECKING:
    from .client import Portico

T = TypeVar("T")

Photo = Union[bytes, str]
"""A JPEG or PNG: raw bytes, or already base64 text."""


class _Omitted:
    """An argument left out: not sent at all (``None`` sends ``null``, e.g. to clear a field)."""

    def __repr__(self) -> str:
        return "OMIT"


#: The default of every optional argument of a resource call (typed ``Any`` so it fits every annotation).
OMIT: Any = _Omitted()


class RequestOptions(TypedDict, total=False):
    """Per-call options of every resource call (``options={...}``)."""

    #: Sent with this call only (after the client's own ``headers``).
    headers: Mapping[str, str]
    #: This POST's ``Idempotency-Key`` (default: a new UUID, the same on each retry).
    idempotency_key: str
    #: Seconds per attempt for this call (default: the client's ``timeout``).
    timeout: float


def present(values: Mapping[str, Any]) -> Dict[str, Any]:
    """The arguments given (``OMIT`` dropped), photos as base64 text."""
    out: Dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, _Omitted):
            continue
        if key == "frame" and isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        elif key == "frames" and isinstance(value, (list, tuple)):
            value = [base64.b64encode(v).decode("ascii") if isinstance(v, bytes) else v for v in value]
        out[key] = value
    return out


def multipart(fields: Mapping[str, Any], filename: str) -> Tuple[bytes, str]:
    """A ``multipart/form-data`` body: the ``file`` field as a file named ``filename``, others as text."""
    boundary = f"portico-{uuid.uuid4().hex}"
    parts: List[bytes] = []
    for name, value in fields.items():
        if isinstance(value, bytes):
            kind = (
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
                if filename.lower().endswith(".xlsx")
                else "text/csv"
            )
            head = f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\nContent-Type: {kind}'
            parts.append(f"--{boundary}\r\n{head}\r\n\r\n".encode("utf-8") + value + b"\r\n")
        else:
            head = f'Content-Disposition: form-data; name="{name}"'
            parts.append(f"--{boundary}\r\n{head}\r\n\r\n{value}\r\n".encode("utf-8"))
    parts.append(f"--{boundary}--\r\n".encode("ascii"))
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class PageIterator(Generic[T]):
    """A list call: ``for person in portico.persons.list(limit=50)`` walks every page, following
    ``nextCursor`` and fetching the next page only when the loop gets there; ``.page()`` is the first
    page (a dict with ``items``, ``nextCursor`` and, where the API counts, ``total``)."""

    def __init__(
        self,
        client: "Portico",
        method: str,
        path: str,
        *,
        params: Mapping[str, str],
        query: Mapping[str, Any],
        options: Optional[RequestOptions] = None,
    ) -> None:
        self._client = client
        self._method = method
        self._path = path
        self._params = dict(params)
        self._query = present(query)
        self._options = options

    def page(self, cursor: Optional[str] = None) -> Dict[str, Any]:
        """One page: the first, or the one ``cursor`` names."""
        query = dict(self._query)
        if cursor is not None:
            query["cursor"] = cursor
        return cast(
            Dict[str, Any],
            self._client.call(self._method, self._path, params=self._params, query=query, options=self._options),
        )

    def pages(self) -> Iterator[Dict[str, Any]]:
        """Every page, in order."""
        cursor: Optional[str] = self._query.get("cursor")
        while True:
            page = self.page(cursor)
            yield page
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from cast(List[T], page["items"])
