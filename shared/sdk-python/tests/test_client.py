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
from typing import Any, Dict, List, Tuple

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


class CountingPortico(Portico):
    """A client that notes each request it sends (over the real HTTP transport)."""

    sent: List[str]

    def _send(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self, "sent"):
            self.sent = []
        self.sent.append(f"{method} {path}")
        return super()._send(method, path, *args, **kwargs)


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

    def test_quick_start_create_enroll_identify_then_qr_and_by_hand(self) -> None:
        enroll_photo, probe_photo, _ = photos()
        portico = self.client()
        person = portico.persons.create(name="Grace Hopper", document="GH-1906")
        enrolled = portico.enrollment.enroll(person_id=person["id"], frame=enroll_photo)
        self.assertGreater(enrolled["quality"], 0.5)
        result = portico.checkin.identify(ENV["PORTICO_TENANT_SLUG"], frame=probe_photo, device_id="py-door")
        self.assertEqual(result["outcome"], "success")
        recognised = result["person"]
        assert recognised is not None
        self.assertEqual(recognised["id"], person["id"])
        self.assertTrue(portico.persons.get(person["id"])["enrolled"])
        # The same person by QR code and by hand.
        identity = portico.persons.get(person["id"])["identityId"]
        assert identity is not None
        by_qr = portico.checkin.qr(portico.checkin.qr_token(identity)["token"], device_id="py")
        assert by_qr is not None
        self.assertEqual((by_qr["outcome"], by_qr["method"]), ("success", "qr"))
        by_hand = self.admin().checkin.manual(person_id=person["id"])
        self.assertEqual((by_hand["outcome"], by_hand["method"]), ("success", "manual"))

    def test_problem_answer_raises_porticoerror_with_code(self) -> None:
        portico = self.client()
        with self.assertRaises(PorticoError) as caught:
            portico.persons.get("no-such-person")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
        self.assertTrue(caught.exception.request_id)
        with self.assertRaises(PorticoError) as invalid:
            portico.persons.create(name="", document="X")
        self.assertEqual(invalid.exception.code, "validation_failed")
        self.assertTrue(any(e.path.startswith("body.name") for e in invalid.exception.problem.errors))

    def test_429_is_retried_after_retry_after(self) -> None:
        waits: List[float] = []
        portico = self.client(waits, max_retry_after=7200)
        person = portico.persons.create(name="Link Person", document="PY-LP", email="py.link@example.com")
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
        person = portico.persons.create(name="Patient Person", document="PY-PP", email="py.patient@example.com")
        for _ in range(3):
            portico.persons.send_enrollment_link(person["id"])
        with self.assertRaises(PorticoError) as caught:
            portico.persons.send_enrollment_link(person["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (429, "rate_limited"))
        self.assertGreater(caught.exception.retry_after or 0, 1)
        self.assertEqual(waits, [])

    def test_iterate_pages_through_every_person(self) -> None:
        portico = self.client()
        imported = portico.persons.import_(rows=[{"name": f"PyPaged {i}", "document": f"PYP-{i}"} for i in range(120)])
        self.assertEqual((imported["created"], imported["failed"]), (120, 0))
        counting = CountingPortico(ENV["PORTICO_URL"], ENV["PORTICO_API_KEY"])
        ids = [p["id"] for p in counting.persons.list(q="PyPaged", limit=50)]
        self.assertEqual((len(ids), len(set(ids))), (120, 120))
        self.assertEqual(counting.sent, ["GET /v1/persons"] * 3)
        first = counting.persons.list(q="PyPaged", limit=50).page()
        self.assertEqual((len(first["items"]), first["total"]), (50, 120))
        self.assertIsNotNone(first["nextCursor"])
        counting.sent.clear()
        for _ in counting.persons.list(q="PyPaged", limit=50):
            break
        self.assertEqual(len(counting.sent), 1)

    def test_webhook_verified_on_raw_body_and_tampered_copy_refused(self) -> None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            portico = self.client()
            url = f"http://127.0.0.1:{server.server_address[1]}/hook"
            portico.tenants.update_settings(ENV["PORTICO_TENANT_ID"], webhook_url=url)
            person = portico.persons.create(name="Webhook Person", document="PY-WH")
            portico.enrollment.enroll(person_id=person["id"], frame=photos()[2])
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
            self.assertEqual(portico.webhooks.construct_event(raw, headers, secret, now=now), event)
            self.assertTrue(portico.webhooks.verify(raw, headers, secret, now=now))
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

    def test_persons_crud_upsert_import_file_anonymise_delete(self) -> None:
        portico = self.client()
        ada = portico.persons.create(name="Ada Lovelace", document="PY-AL")
        self.assertEqual(portico.persons.get(ada["id"])["name"], "Ada Lovelace")
        self.assertEqual(portico.persons.update(ada["id"], email="py.ada@example.com")["email"], "py.ada@example.com")
        self.assertEqual(portico.persons.upsert(external_id="py-grace", name="Grace", document="PY-G")["result"], "created")
        again = portico.persons.upsert(external_id="py-grace", name="Grace B.", document="PY-G")
        self.assertEqual((again["result"], again["person"]["name"]), ("updated", "Grace B."))
        csv = b"name,document,externalId\nAlan Turing,PY-AT,py-alan\n"
        self.assertEqual(portico.persons.import_(file=csv, filename="people.csv")["created"], 1)
        (alan,) = list(portico.persons.list(external_id="py-alan"))
        portico.persons.anonymise(alan["id"])
        self.assertTrue(portico.persons.get(alan["id"])["anonymised"])
        portico.persons.delete(ada["id"])
        with self.assertRaises(PorticoError) as gone:
            portico.persons.get(ada["id"])
        self.assertEqual(gone.exception.code, "not_found")

    def test_events_and_guests(self) -> None:
        portico = self.client()
        event = portico.events.create(name="Py Launch")
        self.assertEqual(portico.events.get(event["id"])["status"], "draft")
        self.assertEqual(portico.events.update(event["id"], description="Doors at 7")["description"], "Doors at 7")
        self.assertEqual(portico.events.status(event["id"], status="open")["status"], "open")
        self.assertIn(event["id"], [e["id"] for e in portico.events.list(limit=1)])
        guest = portico.guests.create(event["id"], name="Guest One", email="py.one@example.com")
        imported = portico.guests.import_(
            event["id"], file=b"name,email\nGuest Two,py.two@example.com\nGuest Three,py.three@example.com\n"
        )
        self.assertEqual((imported["created"], imported["failed"]), (2, 0))
        counting = CountingPortico(ENV["PORTICO_URL"], ENV["PORTICO_API_KEY"])
        names = sorted(g["name"] for g in counting.guests.list(event["id"], limit=2))
        self.assertEqual(names, ["Guest One", "Guest Three", "Guest Two"])
        self.assertEqual(len(counting.sent), 2)
        self.assertTrue(portico.guests.invite(event["id"], guest_ids=[guest["id"]]))

    def test_applications_and_keys(self) -> None:
        admin = self.admin()
        app = admin.applications.create(name="py second app")["application"]
        self.assertIn(app["id"], [a["id"] for a in admin.applications.list()])
        key = admin.applications.keys.create(app["id"])
        self.assertTrue(key["key"].startswith("pk_live_"))
        self.assertIn(key["id"], [k["id"] for k in admin.applications.keys.list(app["id"])["items"]])
        rotated = admin.applications.keys.rotate(app["id"], key["id"])
        admin.applications.keys.revoke(app["id"], rotated["id"])
        with self.assertRaises(PorticoError) as refused:
            Portico(ENV["PORTICO_URL"], rotated["key"]).persons.list().page()
        self.assertEqual(refused.exception.status, 401)
        admin.applications.delete(app["id"])

    def test_sandbox_for_an_admin_session_and_a_test_key(self) -> None:
        admin = self.admin()
        sandbox = Portico(ENV["PORTICO_URL"], access_token=admin.access_token, environment="sandbox")
        sam = sandbox.persons.create(name="Py Sandbox Sam", document="PY-SB")
        test_key = admin.applications.create(name="py sandbox", environment="sandbox")["apiKey"]["key"]
        self.assertTrue(test_key.startswith("pk_test_"))
        self.assertEqual(Portico(ENV["PORTICO_URL"], test_key).persons.get(sam["id"])["name"], "Py Sandbox Sam")
        with self.assertRaises(PorticoError) as live:
            self.client().persons.get(sam["id"])
        self.assertEqual(live.exception.status, 404)
        self.assertEqual(list(admin.persons.list(q="Py Sandbox Sam")), [])

    def test_extra_headers_for_an_api_key_an_admin_session_and_one_call(self) -> None:
        key = Portico(ENV["PORTICO_URL"], ENV["PORTICO_API_KEY"], headers={"x-request-id": "py-integrator-key-1"})
        with self.assertRaises(PorticoError) as by_key:
            key.persons.get("nobody")
        self.assertEqual(by_key.exception.request_id, "py-integrator-key-1")
        admin = self.admin()
        session = Portico(ENV["PORTICO_URL"], access_token=admin.access_token, headers={"x-request-id": "py-integrator-admin-1"})
        with self.assertRaises(PorticoError) as by_session:
            session.events.get("nothing")
        self.assertEqual(by_session.exception.request_id, "py-integrator-admin-1")
        with self.assertRaises(PorticoError) as by_call:
            session.events.get("nothing", options={"headers": {"x-request-id": "py-integrator-call-1"}})
        self.assertEqual(by_call.exception.request_id, "py-integrator-call-1")

    def admin(self) -> Portico:
        admin = Portico(ENV["PORTICO_URL"])
        admin.login(ENV["PORTICO_ADMIN_EMAIL"], ENV["PORTICO_ADMIN_PASSWORD"])
        return admin

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
