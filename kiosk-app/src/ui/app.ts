// The kiosk UI: attract -> camera with a face guide -> liveness challenge step by step -> result ->
// attract again by itself; a picture too poor to judge (`face_retake`) goes back to the camera saying
// what to fix; a face between the two lines (`step_up_required`) asks for the invitation QR code or
// staff; QR mode; the staff fallback behind a PIN (a long press on the attract screen's top-right
// corner). It talks only to its own origin: `/agent/*` is the device agent on this
// machine (frames never go anywhere else), `/branding/{token}` the event's public branding, cached in
// localStorage so the attract screen keeps its look offline.
import type {
  AgentChallenge as Challenge,
  AgentFaceBox,
  AgentStatus,
  AgentStepUpRequired as StepUpRequired,
  DoorAnswer,
  PublicBranding as PublicBrandingSchema,
  StaffGuests,
  z,
} from '@portico/contract';
import jsQRModule from 'jsqr';
import { framingFix, type FaceBox, type Fix } from './guide.js';
import { textsFor } from './texts.js';

/** The agent's answers (their schemas: `@portico/contract`, agent.ts), with a problem's fields. */
type RetakeReason = 'move_closer' | 'hold_still' | 'more_light' | 'face_the_camera';
type AgentAnswer = (DoorAnswer | StepUpRequired) & {
  code?: string;
  details?: { reasons?: RetakeReason[] };
};
type PublicBranding = z.infer<typeof PublicBrandingSchema>;
type StaffGuest = StaffGuests['items'][number];

const params = new URLSearchParams(location.search);
const token = params.get('event') ?? '';
const CACHE_KEY = `portico.kiosk.branding.${token}`;
// How long each result stays before the kiosk goes back to attract by itself.
const RESULT_MS = { success: 5000, other: 9000 };
const ACTION_MS = 3000;
const ACTION_FRAMES = 7;
/** A retake's advice stays this long before the live guide speaks again; after MAX_RETAKES, "no face". */
const RETAKE_HOLD_MS = 2500;
const MAX_RETAKES = 3;

// Figures the browser test prints (issue targets: first paint, last frame -> result, long tasks; the
// face guide's round trips to the agent).
const metrics = {
  attractPaintMs: -1,
  lastFrameToResultMs: [] as number[],
  longTasksMs: [] as number[],
  /** When each long task started (ms since navigation), beside its duration in longTasksMs. */
  longTasksAt: [] as number[],
  faceBoxMs: [] as number[],
};
(window as unknown as { kioskMetrics: typeof metrics }).kioskMetrics = metrics;
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      metrics.longTasksMs.push(Math.round(e.duration));
      metrics.longTasksAt.push(Math.round(e.startTime));
    }
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // Browsers without the Long Tasks API: nothing to measure.
}

let branding: PublicBranding | null = readCachedBranding();
let { lang, t } = textsFor(branding?.branding.locale);
let stream: MediaStream | null = null;
let returnTimer: number | undefined;
// jsqr is CommonJS: TypeScript sees the module object, esbuild hands over the function; the package sets
// `jsQR.default = jsQR`, so `.default` is the decoder either way.
const jsQR = jsQRModule.default;
const QR_WAIT_MS = 30_000;
/** The event's name as the agent's replica has it (before the cloud's branding arrives). */
let agentEventName: string | null = null;
// Each run of the flow gets a number; a stale run (the kiosk went back to attract) stops quietly.
let run = 0;

const root = document.getElementById('app')!;
const banner = document.getElementById('offline')!;
const video = document.createElement('video');
video.muted = true;
video.playsInline = true;
video.autoplay = true;

function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

function show(screen: string, ...children: Node[]) {
  clearTimeout(returnTimer);
  root.replaceChildren(h('main', { class: `screen ${screen}`, 'data-screen': screen }, ...children));
}

function readCachedBranding(): PublicBranding | null {
  try {
    const raw = localStorage.getItem(CACHE_KEY);
    return raw ? (JSON.parse(raw) as PublicBranding) : null;
  } catch {
    return null;
  }
}

async function refreshBranding() {
  try {
    const res = await fetch(`/branding/${encodeURIComponent(token)}`);
    if (!res.ok) return;
    branding = (await res.json()) as PublicBranding;
    localStorage.setItem(CACHE_KEY, JSON.stringify(branding));
    applyBranding();
  } catch {
    // Offline: the cached branding stays.
  }
}

function applyBranding() {
  ({ lang, t } = textsFor(branding?.branding.locale));
  document.documentElement.lang = lang;
  const b = branding?.branding;
  if (b?.primaryColor) document.documentElement.style.setProperty('--primary', b.primaryColor);
  if (b?.secondaryColor) document.documentElement.style.setProperty('--secondary', b.secondaryColor);
  if (root.querySelector('[data-screen="attract"]')) attract();
}

function attract() {
  run++;
  stopCamera();
  const b = branding?.branding;
  const title = b?.displayName ?? branding?.name ?? agentEventName ?? '';
  show(
    'attract',
    ...(b?.logoUrl ? [h('img', { class: 'logo', src: b.logoUrl, alt: '' })] : []),
    h('h1', {}, title),
    ...(b?.welcomeText ? [h('p', { class: 'welcome-text' }, b.welcomeText)] : []),
    h('button', { id: 'start', class: 'primary' }, t.tapToStart),
    h('button', { id: 'qr-start', class: 'secondary' }, t.qrStart),
    h('button', { id: 'staff-open', class: 'staff-corner', 'aria-label': t.staff }),
  );
  const main = root.querySelector('main')!;
  const start = (e: Event) => {
    if ((e.target as Element).closest('#staff-open')) return;
    main.removeEventListener('click', start);
    void ((e.target as Element).closest('#qr-start') ? qrFlow() : startFlow());
  };
  main.addEventListener('click', start);
  // Staff: a long press (2 s) on the corner; a short touch there does nothing.
  const corner = main.querySelector('#staff-open')!;
  let press: number | undefined;
  corner.addEventListener('pointerdown', () => (press = window.setTimeout(() => staffPin(), STAFF_PRESS_MS)));
  for (const end of ['pointerup', 'pointerleave', 'pointercancel'])
    corner.addEventListener(end, () => clearTimeout(press));
}

/** Opens the camera, or keeps it open (a retake, a step-up's QR scan follow a face on the same camera). */
async function openCamera(): Promise<boolean> {
  if (stream?.active) {
    if (video.srcObject !== stream) video.srcObject = stream;
    return true;
  }
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 }, audio: false });
  } catch {
    result('error', t.cameraBlocked, t.unavailableSub, false);
    return false;
  }
  video.srcObject = stream;
  while (video.videoWidth === 0) await sleep(50);
  return true;
}

/** QR mode: the camera looks for a QR code (jsQR, in the page) and sends only its text to the agent. */
async function qrFlow() {
  const mine = ++run;
  show(
    'qr',
    h('div', { class: 'stage' }, video, h('div', { class: 'square' })),
    h('p', { class: 'hint' }, t.showQr),
  );
  if (!(await openCamera())) return;
  const code = await scanQr(mine, QR_WAIT_MS);
  if (code === null) return mine === run ? attract() : undefined;
  show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, t.checking));
  try {
    const answer = await agent<DoorAnswer>('POST', `/events/${encodeURIComponent(token)}/qr`, { code });
    if (mine === run) showAnswer(answer.status, answer.body, 'qr');
  } catch {
    result('error', t.unavailable, t.unavailableSub, false);
  }
}

/** The text of the first QR code the camera shows within `waitMs`; null: none, or the run ended. */
async function scanQr(mine: number, waitMs: number): Promise<string | null> {
  const started = performance.now();
  while (mine === run && performance.now() - started < waitMs) {
    grab.width = video.videoWidth;
    grab.height = video.videoHeight;
    const ctx = grab.getContext('2d', { willReadFrequently: true })!;
    ctx.drawImage(video, 0, 0);
    const found = jsQR(ctx.getImageData(0, 0, grab.width, grab.height).data, grab.width, grab.height, {
      inversionAttempts: 'dontInvert',
    });
    if (found?.data) return found.data;
    await sleep(200);
  }
  return null;
}

function stopCamera() {
  stream?.getTracks().forEach((track) => track.stop());
  stream = null;
  video.srcObject = null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The camera with the face guide, then the challenge. After a `face_retake` (`retake`: the agent's
 * reasons, worst first, and how many retakes so far) the camera stays on and the worst reason is shown
 * for RETAKE_HOLD_MS before the live guide speaks again.
 */
async function startFlow(retake?: { reasons: RetakeReason[]; count: number }) {
  const mine = ++run;
  const advice = retake?.reasons[0];
  const hint = h('p', { class: 'hint', id: 'hint' }, advice ? t.retake[advice] : t.fitOval);
  show(
    'camera',
    // Why the person is back at the camera: the picture, not them.
    ...(advice ? [h('p', { class: 'step', id: 'retake-why' }, t.retakeWhy)] : []),
    h('div', { class: 'stage' }, video, h('div', { class: 'oval' })),
    hint,
  );
  if (advice) {
    hint.classList.add('warn');
    hint.dataset.retake = advice;
    root.querySelector('main')!.dataset.retake = advice;
  }
  if (!(await openCamera())) return;
  if (advice) {
    await sleep(RETAKE_HOLD_MS);
    delete hint.dataset.retake;
  }
  // The face guide: the browser judges the light; distance and centring come from the agent's own
  // detector (`POST /face-box` with a 320x240 copy), until the face has been well placed for 800 ms.
  // Without an engine on the agent the light alone gates (a 422 from identify then says "no face").
  let guided = true;
  let goodSince = 0;
  const started = performance.now();
  for (;;) {
    if (mine !== run) return;
    if (performance.now() - started > 20_000) return attract();
    let fix: Fix | 'tooDark' | null = brightness() < 45 ? 'tooDark' : null;
    if (!fix && guided) {
      const face = await locateFace();
      if (mine !== run) return;
      if (face === undefined) guided = false;
      else fix = framingFix(face);
    }
    hint.textContent = fix ? t[fix === 'noFace' ? 'fitOval' : fix] : guided ? t.holdStill : t.fitOval;
    hint.classList.toggle('warn', fix !== null);
    hint.dataset.fix = fix ?? 'ok';
    if (fix) goodSince = 0;
    else if (!goodSince) goodSince = performance.now();
    else if (performance.now() - goodSince >= 800) break;
    await sleep(guided ? 100 : 200);
  }
  await challenge(mine, retake?.count ?? 0);
}

const small = document.createElement('canvas');
/**
 * The face's box in a small copy of the picture, from the agent's detector; null: no face; undefined:
 * the agent cannot say (no face engine, not answering). The JPEG is encoded off the main thread.
 */
async function locateFace(): Promise<FaceBox | null | undefined> {
  const asked = performance.now();
  small.width = 320;
  small.height = 240;
  small.getContext('2d')!.drawImage(video, 0, 0, 320, 240);
  const blob = await new Promise<Blob | null>((resolve) => small.toBlob(resolve, 'image/jpeg', 0.8));
  if (!blob) return undefined;
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  try {
    const answer = await agent<AgentFaceBox>('POST', '/face-box', { frame: btoa(binary) });
    metrics.faceBoxMs.push(Math.round(performance.now() - asked));
    return answer.status === 200 ? answer.body.face : undefined;
  } catch {
    return undefined;
  }
}

const probe = document.createElement('canvas');
function brightness(): number {
  probe.width = 32;
  probe.height = 24;
  const ctx = probe.getContext('2d', { willReadFrequently: true })!;
  ctx.drawImage(video, 0, 0, 32, 24);
  const px = ctx.getImageData(0, 0, 32, 24).data;
  let sum = 0;
  for (let i = 0; i < px.length; i += 4) sum += 0.299 * px[i]! + 0.587 * px[i + 1]! + 0.114 * px[i + 2]!;
  return sum / (px.length / 4);
}

const grab = document.createElement('canvas');
function frame(): string {
  grab.width = video.videoWidth;
  grab.height = video.videoHeight;
  grab.getContext('2d')!.drawImage(video, 0, 0);
  return grab.toDataURL('image/jpeg', 0.85).slice('data:image/jpeg;base64,'.length);
}

async function agent<T>(method: string, path: string, body?: unknown) {
  const res = await fetch(`/agent${path}`, {
    method,
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
  return { status: res.status, body: (await res.json()) as T & { code?: string } };
}

function stepScreen(step: number, of: number, text: string, seconds: number) {
  const count = h('div', { class: 'countdown', id: 'countdown' }, String(seconds));
  show(
    'challenge',
    h('div', { class: 'stage' }, video, h('div', { class: 'oval' }), count),
    h('p', { class: 'step' }, t.step(step, of)),
    h('p', { class: 'instruction', id: 'instruction' }, text),
  );
  root.querySelector('main')!.dataset.step = String(step);
  return count;
}

async function challenge(mine: number, retakes: number) {
  let c: Challenge;
  try {
    c = (await agent<Challenge>('GET', '/challenge')).body;
  } catch {
    return result('error', t.unavailable, t.unavailableSub, false);
  }
  // Each frame goes to the agent as soon as it is taken (the posts chained, so it gets them in order)
  // and is analysed while the person is still performing the action: after the last one, only its
  // analysis and the decision remain. Should a post fail (an agent from before streaming answers 404),
  // the posts stop and identify carries the frames, as it used to (an agent that already holds some of
  // them refuses that as ambiguous, and the guest sees "unavailable").
  const frames: string[] = [];
  let streaming = Promise.resolve(true);
  const take = () => {
    const f = frame();
    frames.push(f);
    streaming = streaming.then(
      (ok) =>
        ok &&
        agent('POST', `/challenge/${encodeURIComponent(c.nonce)}/frames`, { frame: f }).then(
          (posted) => posted.status === 202,
          () => false,
        ),
    );
  };
  stepScreen(1, 2, t.lookAtCamera, 1);
  await sleep(1000);
  if (mine !== run) return;
  take();

  const count = stepScreen(2, 2, c.action === 'blink' ? t.blink : t.turnHead, ACTION_MS / 1000);
  const started = performance.now();
  for (let i = 0; i < ACTION_FRAMES; i++) {
    await sleep(ACTION_MS / ACTION_FRAMES);
    if (mine !== run) return;
    take();
    count.textContent = String(Math.max(1, Math.ceil((ACTION_MS - (performance.now() - started)) / 1000)));
  }
  const lastFrameAt = performance.now();
  show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, t.checking));

  let answer: { status: number; body: AgentAnswer };
  try {
    const streamed = await streaming;
    answer = await agent<AgentAnswer>(
      'POST',
      `/events/${encodeURIComponent(token)}/identify`,
      streamed ? { nonce: c.nonce } : { frames, nonce: c.nonce },
    );
  } catch {
    return result('error', t.unavailable, t.unavailableSub, false);
  }
  if (mine !== run) return;
  showAnswer(answer.status, answer.body, 'face', retakes);
  requestAnimationFrame(() =>
    requestAnimationFrame(() =>
      metrics.lastFrameToResultMs.push(Math.round(performance.now() - lastFrameAt)),
    ),
  );
}

function showAnswer(status: number, a: AgentAnswer, method: 'face' | 'qr' | 'step-up' = 'face', retakes = 0) {
  if (status === 422 && a.code === 'face_retake' && retakes < MAX_RETAKES) {
    return void startFlow({ reasons: a.details?.reasons ?? [], count: retakes + 1 });
  }
  if (status === 422) return result('no-face', t.noFace, '', true);
  if (method === 'step-up' && (status === 404 || status === 409 || status === 410)) {
    return result('error', t.stepUpExpired, '', false);
  }
  if (status === 403 && a.code === 'device_not_authorised') {
    return result('error', t.unauthorised, t.unavailableSub, false);
  }
  if (status !== 200) return result('error', t.unavailable, t.unavailableSub, false);
  if (a.outcome === 'step_up_required') return void stepUp(a);
  if (a.outcome === 'success') {
    return result('welcome', t.welcome(capitalised(a.guest?.displayName)), t.welcomeSub, false);
  }
  if (a.outcome === 'liveness_failed')
    return result('liveness-failed', t.livenessFailed, t.livenessFailedSub, true);
  if (a.outcome === 'geofence_alert') return result('geofence', t.geofence, t.geofenceSub, false);
  if (a.reason === 'event_closed') return result('closed', t.closed, t.closedSub, false);
  if (a.reason === 'already_checked_in') {
    return result('already-in', t.alreadyInTitle(capitalised(a.guest?.displayName)), t.alreadyInSub, false);
  }
  if (a.reason === 'capacity_reached') return result('full', t.full, t.fullSub, false);
  if (a.reason === 'method_not_allowed') return result('closed', t.methodNotAllowed, t.unavailableSub, false);
  if (a.reason === 'step_up_failed')
    return result('step-up-failed', t.stepUpFailed, t.stepUpFailedSub, false);
  if (method === 'qr') return result('not-recognised', t.qrUnknown, t.qrUnknownSub, false);
  return result('not-recognised', t.notRecognised, t.notRecognisedSub, true);
}

/** A guest's first name as a greeting shows it. */
function capitalised(displayName: string | undefined): string {
  const first = (displayName ?? '').trim().split(/\s+/)[0] ?? '';
  return first.charAt(0).toUpperCase() + first.slice(1);
}

function result(kind: string, title: string, sub: string, retry: boolean) {
  stopCamera();
  const icon =
    kind === 'welcome' ? '✓' : ['error', 'closed', 'full', 'already-in'].includes(kind) ? '!' : '✕';
  show(
    `result ${kind}`,
    h('div', { class: 'icon', 'aria-hidden': 'true' }, icon),
    h('h1', { id: 'result-title' }, title),
    ...(sub ? [h('p', { class: 'sub' }, sub)] : []),
    ...(retry ? [h('button', { id: 'retry', class: 'primary' }, t.tryAgain)] : []),
  );
  root.querySelector('#retry')?.addEventListener('click', () => void startFlow());
  returnTimer = window.setTimeout(attract, kind === 'welcome' ? RESULT_MS.success : RESULT_MS.other);
}

/**
 * A face between the two lines: the person shows their invitation QR code (scanned with the same
 * camera as QR mode) or asks staff, who confirm with their PIN after checking a document. Back to
 * attract when the agent's step-up expires.
 */
async function stepUp(s: StepUpRequired) {
  const mine = ++run;
  const qr = s.factors.includes('qr');
  const staffAllowed = s.factors.includes('staff');
  const leftMs = Math.min(60_000, Math.max(0, Date.parse(s.expiresAt) - Date.now()));
  const endsAt = performance.now() + leftMs;
  const count = h('div', { class: 'countdown', id: 'countdown' }, String(Math.ceil(leftMs / 1000)));
  show(
    'step-up',
    h('h1', { id: 'step-up-title' }, t.stepUpTitle),
    h('p', { class: 'sub' }, qr && staffAllowed ? t.stepUpSub : qr ? t.stepUpQrOnly : t.stepUpStaffOnly),
    ...(qr ? [h('div', { class: 'stage small' }, video, h('div', { class: 'square' }), count)] : []),
    ...(staffAllowed ? [h('button', { id: 'step-up-staff', class: 'secondary' }, t.stepUpStaffButton)] : []),
  );
  root.querySelector('#step-up-staff')?.addEventListener('click', () => staffPin(() => void stepUpStaff(s)));
  returnTimer = window.setTimeout(attract, leftMs);
  // The seconds left, on the camera picture, until the QR code is read or the screen changes.
  const tick = window.setInterval(() => {
    if (mine !== run || !count.isConnected) return clearInterval(tick);
    count.textContent = String(Math.max(0, Math.ceil((endsAt - performance.now()) / 1000)));
  }, 1000);
  if (!qr) return stopCamera();
  if (!(await openCamera())) return;
  const code = await scanQr(mine, leftMs);
  if (code === null || mine !== run) return;
  show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, t.checking));
  try {
    const answer = await agent<AgentAnswer>('POST', `/step-up/${encodeURIComponent(s.attemptId)}`, {
      factor: 'qr',
      code,
    });
    if (mine === run) showAnswer(answer.status, answer.body, 'step-up');
  } catch {
    result('error', t.unavailable, t.unavailableSub, false);
  }
}

/** Staff, in a session opened with their PIN: the candidate's name to check on a document, yes or no. */
async function stepUpStaff(s: StepUpRequired) {
  if (!staff) return attract();
  const path = `/step-up/${encodeURIComponent(s.attemptId)}`;
  const finish = async (answer: { status: number; body: AgentAnswer } | null) => {
    const ending = staff;
    staff = null;
    clearTimeout(staffTimer);
    if (ending) void staffCall('DELETE', '/staff/session', undefined, ending.token).catch(() => undefined);
    if (!answer) return result('error', t.unavailable, t.unavailableSub, false);
    showAnswer(answer.status, answer.body, 'step-up');
  };
  const candidate = await staffCall<{ name: string }>('GET', path).catch(() => null);
  // Used, expired or gone meanwhile: showAnswer says so from the status alone.
  if (candidate?.status !== 200)
    return finish(candidate && { status: candidate.status, body: {} as AgentAnswer });
  const decide = async (confirmed: boolean) =>
    finish(await staffCall<AgentAnswer>('POST', path, { factor: 'staff', confirmed }).catch(() => null));
  show(
    'step-up-confirm',
    h('h1', { id: 'step-up-name' }, t.stepUpConfirmTitle(candidate.body.name)),
    h('p', { class: 'sub' }, t.stepUpConfirmSub),
    h(
      'div',
      { class: 'staff-actions' },
      h('button', { id: 'step-up-yes', class: 'primary' }, t.stepUpYes),
      h('button', { id: 'step-up-no', class: 'secondary' }, t.stepUpNo),
    ),
  );
  root.querySelector('#step-up-yes')!.addEventListener('click', () => void decide(true));
  root.querySelector('#step-up-no')!.addEventListener('click', () => void decide(false));
}

// The staff fallback: PIN -> search the event's list on the device -> check a guest in by hand. The
// agent holds the PIN's hash, counts wrong PINs and locks out; a session unused for its idle timeout
// (the agent's `STAFF_SESSION_S`) ends and the kiosk returns to attract.
const STAFF_PRESS_MS = 2000;
const PIN_IDLE_MS = 30_000;
let staff: { token: string; idleMs: number } | null = null;
let staffTimer: number | undefined;

function staffIdle(ms: number) {
  clearTimeout(staffTimer);
  staffTimer = window.setTimeout(() => void endStaff(), ms);
}

async function endStaff() {
  clearTimeout(staffTimer);
  const ending = staff;
  staff = null;
  attract();
  if (ending) await staffCall('DELETE', '/staff/session', undefined, ending.token).catch(() => undefined);
}

async function staffCall<T>(method: string, path: string, body?: unknown, token = staff?.token) {
  const res = await fetch(`/agent${path}`, {
    method,
    headers: {
      ...(token && { 'x-staff-session': token }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    retryAfterS: Number(res.headers.get('retry-after') ?? 0),
    body: (await res.json()) as T & { code?: string },
  };
}

function keypad(keys: string[], press: (key: string) => void, cls: string) {
  const pad = h('div', { class: cls });
  for (const key of keys) {
    const b = h(
      'button',
      { class: 'key', 'data-key': key },
      key === 'Backspace' ? '⌫' : key === ' ' ? '␣' : key,
    );
    b.addEventListener('click', () => press(key));
    pad.append(b);
  }
  return pad;
}

/** The PIN pad; a right PIN opens a staff session, then `opened` (by default the guest search). */
function staffPin(opened: () => void = staffSearch) {
  run++;
  stopCamera();
  let pin = '';
  const dots = h('div', { class: 'pin-dots', id: 'pin-dots' });
  const message = h('p', { class: 'staff-msg', id: 'staff-msg', role: 'alert' });
  const paint = () => (dots.textContent = pin ? '●'.repeat(pin.length) : '–');
  const submit = async () => {
    if (!pin) return;
    const tried = pin;
    pin = '';
    paint();
    try {
      const answer = await staffCall<{ token: string; idleTimeoutS: number }>(
        'POST',
        '/staff/session',
        { pin: tried },
        '',
      );
      if (answer.status === 200) {
        staff = { token: answer.body.token, idleMs: answer.body.idleTimeoutS * 1000 };
        return opened();
      }
      message.textContent =
        answer.status === 429
          ? t.staffLocked(answer.retryAfterS)
          : answer.status === 503
            ? t.staffUnavailable
            : t.wrongPin;
      message.dataset.code = answer.body.code ?? '';
    } catch {
      message.textContent = t.unavailable;
    }
  };
  const press = (key: string) => {
    staffIdle(PIN_IDLE_MS);
    if (key === 'Backspace') pin = pin.slice(0, -1);
    else if (key === 'OK') return void submit();
    else if (/^\d$/.test(key) && pin.length < 12) pin += key;
    paint();
  };
  show(
    'staff-pin',
    h('h1', {}, t.staffPinTitle),
    dots,
    message,
    keypad(['1', '2', '3', '4', '5', '6', '7', '8', '9', 'Backspace', '0', 'OK'], press, 'pinpad'),
    h('button', { id: 'staff-cancel', class: 'secondary' }, t.cancel),
  );
  paint();
  root.querySelector('#staff-cancel')!.addEventListener('click', () => void endStaff());
  root.querySelector('main')!.addEventListener('keydown', (e) => {
    if (/^\d$/.test(e.key) || e.key === 'Backspace') press(e.key);
    if (e.key === 'Enter') press('OK');
  });
  (root.querySelector('main') as HTMLElement).tabIndex = -1;
  (root.querySelector('main') as HTMLElement).focus();
  staffIdle(PIN_IDLE_MS);
}

function staffSearch() {
  if (!staff) return attract();
  staffIdle(staff.idleMs);
  const input = h('input', {
    id: 'staff-q',
    type: 'search',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: t.staffTypeName,
  }) as HTMLInputElement;
  const list = h('div', { class: 'staff-results', id: 'staff-results', role: 'list' });
  let asked = 0;
  const search = async () => {
    const mine = ++asked;
    const q = input.value.trim();
    if (!q) return list.replaceChildren();
    const answer = await staffCall<{ items: StaffGuest[] }>(
      'GET',
      `/events/${encodeURIComponent(token)}/guests?q=${encodeURIComponent(q)}&limit=3`,
    ).catch(() => null);
    if (mine !== asked) return;
    if (answer?.status === 401) return void endStaff();
    const items = answer?.status === 200 ? answer.body.items : [];
    list.replaceChildren(
      ...(items.length === 0
        ? [h('p', { class: 'sub' }, answer?.status === 200 ? t.staffNoMatch : t.unavailable)]
        : items.map((g) => {
            const row = h(
              'button',
              { class: 'guest-row', 'data-guest-id': g.guestId, role: 'listitem' },
              h('span', { class: 'name' }, g.name),
              ...(g.checkedIn ? [h('span', { class: 'badge' }, t.alreadyIn)] : []),
            );
            row.addEventListener('click', () => void staffCheckIn(g));
            return row;
          })),
    );
  };
  let debounce: number | undefined;
  const changed = () => {
    staffIdle(staff?.idleMs ?? 0);
    clearTimeout(debounce);
    debounce = window.setTimeout(() => void search(), 150);
  };
  input.addEventListener('input', changed);
  // Three rows of ten: QWERTYUIOP / ASDFGHJKL ⌫ / ZXCVBNM and a wide space.
  const letters = [...'QWERTYUIOPASDFGHJKL', 'Backspace', ...'ZXCVBNM', ' '];
  const type = (key: string) => {
    input.value = key === 'Backspace' ? input.value.slice(0, -1) : input.value + key.toLowerCase();
    changed();
  };
  show(
    'staff-search',
    h(
      'div',
      { class: 'staff-bar' },
      h('h1', {}, t.staffSearchTitle),
      h('button', { id: 'staff-done', class: 'secondary' }, t.done),
    ),
    input,
    list,
    keypad(letters, type, 'keyboard'),
  );
  root.querySelector('#staff-done')!.addEventListener('click', () => void endStaff());
  input.focus();
}

async function staffCheckIn(guest: StaffGuest) {
  if (!staff) return attract();
  staffIdle(staff.idleMs);
  show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, t.checking));
  const answer = await staffCall<DoorAnswer>('POST', `/events/${encodeURIComponent(token)}/manual`, {
    guestId: guest.guestId,
  }).catch(() => null);
  if (!staff) return;
  if (answer?.status === 401) return void endStaff();
  const a = answer?.status === 200 ? answer.body : null;
  const admitted = a?.outcome === 'success' || a?.outcome === 'geofence_alert';
  const [kind, title, sub] = !a
    ? ['error', t.unavailable, '']
    : admitted
      ? ['welcome', t.staffCheckedIn(guest.name), '']
      : a.reason === 'event_closed'
        ? ['closed', t.closed, '']
        : a.reason === 'already_checked_in'
          ? ['closed', t.staffAlreadyIn(guest.name), '']
          : a.reason === 'capacity_reached'
            ? ['full', t.full, '']
            : ['closed', t.manualNotAllowed, ''];
  show(
    `result staff-result ${kind}`,
    h('div', { class: 'icon', 'aria-hidden': 'true' }, admitted ? '✓' : '!'),
    h('h1', { id: 'result-title' }, title),
    ...(sub ? [h('p', { class: 'sub' }, sub)] : []),
    h(
      'div',
      { class: 'staff-actions' },
      h('button', { id: 'staff-next', class: 'primary' }, t.nextGuest),
      h('button', { id: 'staff-done', class: 'secondary' }, t.done),
    ),
  );
  root.querySelector('#staff-next')!.addEventListener('click', staffSearch);
  root.querySelector('#staff-done')!.addEventListener('click', () => void endStaff());
}

function watchStatus() {
  const source = new EventSource('/agent/status/stream');
  source.onmessage = (message) => {
    const s = JSON.parse(message.data as string) as AgentStatus;
    // The cloud down and no branding cached yet (a fresh browser profile): the agent's replica still
    // knows the event's name.
    const name = s.events.find((e) => e.token === token)?.name ?? null;
    if (name !== agentEventName) {
      agentEventName = name;
      const title = root.querySelector('[data-screen="attract"] h1');
      if (title && !branding) title.textContent = name ?? '';
    }
    // Refused credentials are not an outage: waiting does not help, staff must pair the device again.
    banner.hidden = s.online;
    banner.classList.toggle('unauthorised', s.unauthorized !== null);
    banner.textContent = s.online ? '' : s.unauthorized ? t.unauthorised : t.offline(s.queueLength);
  };
}

applyBranding();
attract();
requestAnimationFrame(() => (metrics.attractPaintMs = Math.round(performance.now())));
watchStatus();
void refreshBranding();
