"""The Python SDK against a running Portico service.

Started by ``test/python.test.ts`` (``pnpm test``), which runs a real service and passes it in the
environment: PORTICO_URL, PORTICO_API_KEY, PORTICO_TENANT_ID, PORTICO_TENANT_SLUG,
PORTICO_WEBHOOK_SECRET, PORTICO_ADMIN_EMAIL, PORTICO_ADMIN_PASSWORD, PORTICO_PHOTOS (enroll, probe
and another person's photo, os.pathsep-separated) and PORTICO_CLOCK_URL (moves the service's clock,
so waiting out a Retry-After takes no real time).
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
import unittest
import urllib.request
from typing import Dict, List, Tuple

from portico import (
    Portico,
    PorticoError,
    RetryPolicy,
    WebhookSignatureError,
    construct_webhook_event,
    verify_webhook_signature,
)

ENV = os.environ
RUNNING = "PORTICO_URL" in ENV


def advance_clock(seconds: float) -> None:
    body = json.dumps({"ms": int(seconds * 1000)}).encode()
    urllib.request.urlopen(urllib.request.Request(ENV["PORTICO_CLOCK_URL"], data=body, method="POST")).read()


def photos() -> List[bytes]:
    out = []
    for path in ENV["PORTICO_PHOTOS"].split(os.pathsep):
        with open(path, "rb") as f:
            out.append(f.read())
    return out


class Receiver(http.server.BaseHTTPRequestHandler):
    received: List[Tuple[Dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        raw = self.rfile.read(int(self.headers["content-length"]))
        Receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, raw))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@unittest.skipUnless(RUNNING, "PORTICO_URL not set: run through `pnpm vitest run shared/sdk-python`")
class ClientTest(unittest.TestCase):
    def client(self, waits: List[float] | None = None, max_retry_after: float = 60.0) -> Portico:
        def sleep(seconds: float) -> None:
            if waits is not None:
                waits.append(seconds)
            advance_clock(seconds)

        return Portico(
            ENV["PORTICO_URL"],
            ENV["PORTICO_API_KEY"],
            retry=RetryPolicy(max_retry_after=max_retry_after),
            sleep=sleep,
        )

    def test_quick_start_create_enroll_identify(self) -> None:
        enroll_photo, probe_photo, _ = photos()
        portico = self.client()
        person = portico.persons.create("Grace Hopper", "GH-1906")
        enrolled = portico.enroll(person["id"], enroll_photo)
        self.assertGreater(enrolled["quality"], 0.5)
        result = portico.identify(ENV["PORTICO_TENANT_SLUG"], probe_photo, device_id="py-door")
        self.assertEqual(result["outcome"], "success")
        recognised = result["person"]
        assert recognised is not None
        self.assertEqual(recognised["id"], person["id"])
        self.assertTrue(portico.persons.get(person["id"])["enrolled"])

    def test_problem_answer_raises_porticoerror_with_code(self) -> None:
        portico = self.client()
        with self.assertRaises(PorticoError) as caught:
            portico.persons.get("no-such-person")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
        self.assertTrue(caught.exception.request_id)
        with self.assertRaises(PorticoError) as invalid:
            portico.persons.create("", "X")
        self.assertEqual(invalid.exception.code, "validation_failed")
        self.assertTrue(any(e.path.startswith("body.name") for e in invalid.exception.problem.errors))

    def test_429_is_retried_after_retry_after(self) -> None:
        waits: List[float] = []
        portico = self.client(waits, max_retry_after=7200)
        person = portico.persons.create("Link Person", "PY-LP", email="py.link@example.com")
        for _ in range(3):
            portico.persons.send_enrollment_link(person["id"])
        self.assertEqual(waits, [])
        # The fourth link within the hour is a 429 with Retry-After: waited for, then sent.
        portico.persons.send_enrollment_link(person["id"])
        self.assertEqual(len(waits), 1)
        self.assertGreater(waits[0], 0)
        self.assertLessEqual(waits[0], 3600)

    def test_429_beyond_max_retry_after_is_raised_with_its_code(self) -> None:
        waits: List[float] = []
        portico = self.client(waits, max_retry_after=1)
        person = portico.persons.create("Patient Person", "PY-PP", email="py.patient@example.com")
        for _ in range(3):
            portico.persons.send_enrollment_link(person["id"])
        with self.assertRaises(PorticoError) as caught:
            portico.persons.send_enrollment_link(person["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (429, "rate_limited"))
        self.assertGreater(caught.exception.retry_after or 0, 1)
        self.assertEqual(waits, [])

    def test_iterate_pages_through_every_person(self) -> None:
        portico = self.client()
        created = {portico.persons.create(f"PyPaged {i}", f"PYP-{i}")["id"] for i in range(5)}
        first = portico.persons.list(limit=2, q="PyPaged")
        self.assertEqual(len(first["items"]), 2)
        self.assertIsNotNone(first["nextCursor"])
        self.assertEqual({p["id"] for p in portico.persons.iterate(q="PyPaged", limit=2)}, created)

    def test_webhook_verified_on_raw_body_and_tampered_copy_refused(self) -> None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            portico = self.client()
            url = f"http://127.0.0.1:{server.server_address[1]}/hook"
            portico.request("PATCH", f"/v1/tenants/{ENV['PORTICO_TENANT_ID']}/settings", {"webhookUrl": url})
            person = portico.persons.create("Webhook Person", "PY-WH")
            portico.enroll(person["id"], photos()[2])
            deadline = time.time() + 10
            delivery = None
            while delivery is None and time.time() < deadline:
                delivery = next(
                    (
                        (h, raw)
                        for h, raw in Receiver.received
                        if json.loads(raw)["event"] == "person.enrolled"
                        and json.loads(raw)["data"]["personId"] == person["id"]
                    ),
                    None,
                )
                time.sleep(0.05)
            self.assertIsNotNone(delivery, "no person.enrolled webhook arrived")
            headers, raw = delivery  # type: ignore[misc]
            secret = ENV["PORTICO_WEBHOOK_SECRET"]
            # The receiver's clock: the service's (a test clock the retry test moved ahead).
            now = int(headers["x-service-timestamp"]) + 1
            event = construct_webhook_event(raw, headers, secret, now=now)
            self.assertEqual(event["event"], "person.enrolled")
            self.assertEqual(event["tenantId"], ENV["PORTICO_TENANT_ID"])
            self.assertEqual(event["environment"], "live")

            tampered = raw.replace(b'"person.enrolled"', b'"person.deleted"')
            self.assertNotEqual(tampered, raw)
            self.assertFalse(verify_webhook_signature(tampered, headers, secret, now=now))
            with self.assertRaises(WebhookSignatureError):
                construct_webhook_event(tampered, headers, secret, now=now)
            self.assertFalse(verify_webhook_signature(raw, headers, "whsec_other", now=now))
            # During a rotation the header holds two signatures: either secret matches its own.
            signature = headers["x-service-signature-v2"]
            rotating = {**headers, "x-service-signature-v2": f"{'0' * 64},{signature}"}
            self.assertTrue(verify_webhook_signature(raw, rotating, ["whsec_new", secret], now=now))
            forged = {**headers, "x-service-signature-v2": f"{'0' * 64},{'1' * 64}"}
            self.assertFalse(verify_webhook_signature(raw, forged, secret, now=now))
            # Replays: stale (over 5 minutes) and future timestamps are refused; a wider tolerance accepts.
            sent = int(headers["x-service-timestamp"])
            self.assertTrue(verify_webhook_signature(raw, headers, secret, now=sent + 299))
            self.assertFalse(verify_webhook_signature(raw, headers, secret, now=sent + 301))
            self.assertFalse(verify_webhook_signature(raw, headers, secret, now=sent - 301))
            self.assertTrue(verify_webhook_signature(raw, headers, secret, now=sent + 500, tolerance=600))
            with self.assertRaisesRegex(WebhookSignatureError, "timestamp is 400 s from now"):
                construct_webhook_event(raw, headers, secret, now=sent + 400)
            # The body-only signature, timestamp headers stripped, is not enough.
            body_only = {k: v for k, v in headers.items() if k not in ("x-service-timestamp", "x-service-signature-v2")}
            self.assertFalse(verify_webhook_signature(raw, body_only, secret, now=now))
        finally:
            server.shutdown()

    def test_zz_admin_session_is_renewed_from_its_refresh_cookie(self) -> None:
        admin = Portico(ENV["PORTICO_URL"])
        admin.login(ENV["PORTICO_ADMIN_EMAIL"], ENV["PORTICO_ADMIN_PASSWORD"])
        first = admin.access_token
        self.assertEqual(admin.request("GET", "/v1/auth/me")["email"], ENV["PORTICO_ADMIN_EMAIL"])
        advance_clock(16 * 60)  # past the 15-minute access token
        self.assertEqual(admin.request("GET", "/v1/auth/me")["email"], ENV["PORTICO_ADMIN_EMAIL"])
        self.assertNotEqual(admin.access_token, first)


if __name__ == "__main__":
    unittest.main()
