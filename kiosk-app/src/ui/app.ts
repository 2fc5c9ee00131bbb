// The kiosk UI: attract (the camera watching for a face) -> the live guide -> the passive look, and
// the active challenge only when the agent asks for it -> the result -> attract again by itself. A
// picture too poor to judge (`face_retake`) goes back to the camera saying what to fix; a face between
// the two lines (`step_up_required`) asks for the invitation QR code or staff; QR mode; the staff
// fallback behind a PIN (a long press on the attract screen's top-right corner). The screens and their
// one transition function are in core.ts; the flows in face.ts, qr.ts and staff.ts. It talks only to
// its own origin: `/agent/*` is the device agent on this machine, `/branding/{token}` the event's
// public branding, cached in localStorage so the attract screen keeps its look offline.
import type { AgentStatus } from '@portico/contract';
import { currentScreen, go, kiosk, start, token, type Branding } from './core.js';
import { attract, camera, challenge, checking, result } from './face.js';
import { afterPaint, metrics } from './metrics.js';
import { qr, stepUp } from './qr.js';
import { staffPin, staffResult, staffSearch, stepUpConfirm } from './staff.js';
import { textsFor } from './texts.js';

const CACHE_KEY = `portico.kiosk.branding.${token}`;
const banner = document.getElementById('offline')!;

function readCachedBranding() {
  try {
    const raw = localStorage.getItem(CACHE_KEY);
    kiosk.branding = raw ? (JSON.parse(raw) as Branding) : null;
  } catch {
    kiosk.branding = null;
  }
}

async function refreshBranding() {
  try {
    const res = await fetch(`/branding/${encodeURIComponent(token)}`);
    if (!res.ok) return;
    kiosk.branding = (await res.json()) as Branding;
    localStorage.setItem(CACHE_KEY, JSON.stringify(kiosk.branding));
    applyBranding();
    const now = currentScreen();
    if (now.kind === 'attract') go(now);
  } catch {
    // Offline: the cached branding stays.
  }
}

function applyBranding() {
  Object.assign(kiosk, textsFor(kiosk.branding?.branding.locale));
  document.documentElement.lang = kiosk.lang;
  const b = kiosk.branding?.branding;
  if (b?.primaryColor) document.documentElement.style.setProperty('--primary', b.primaryColor);
  if (b?.secondaryColor) document.documentElement.style.setProperty('--secondary', b.secondaryColor);
}

function watchStatus() {
  const source = new EventSource('/agent/status/stream');
  source.onmessage = (message) => {
    const s = JSON.parse(message.data as string) as AgentStatus;
    // The cloud down and no branding cached yet (a fresh browser profile): the agent's replica still
    // knows the event's name.
    const name = s.events.find((e) => e.token === token)?.name ?? null;
    if (name !== kiosk.agentEventName) {
      kiosk.agentEventName = name;
      const title = document.querySelector('[data-screen="attract"] h1');
      if (title && !kiosk.branding) title.textContent = name ?? '';
    }
    // Refused credentials are not an outage: waiting does not help, staff must pair the device again.
    banner.hidden = s.online;
    banner.classList.toggle('unauthorised', s.unauthorized !== null);
    banner.textContent = s.online
      ? ''
      : s.unauthorized
        ? kiosk.t.unauthorised
        : kiosk.t.offline(s.queueLength);
  };
}

readCachedBranding();
applyBranding();
start(
  {
    attract,
    camera,
    challenge,
    checking,
    result,
    'step-up': stepUp,
    qr,
    'staff-pin': staffPin,
    'staff-search': staffSearch,
    'staff-result': staffResult,
    'step-up-confirm': stepUpConfirm,
  },
  { kind: 'attract', armed: true },
);
afterPaint((at) => (metrics.attractPaintMs = Math.round(at)));
watchStatus();
void refreshBranding();
