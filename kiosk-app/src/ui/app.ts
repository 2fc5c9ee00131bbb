// The kiosk UI: attract -> camera with a face guide -> liveness challenge step by step -> result ->
// attract again by itself. It talks only to its own origin: `/agent/*` is the device agent on this
// machine (frames never go anywhere else), `/branding/{token}` the event's public branding, cached in
// localStorage so the attract screen keeps its look offline.
import type { PublicBranding as PublicBrandingSchema, z } from '@portico/contract';
import jsQRModule from 'jsqr';
import { textsFor } from './texts.js';

/** The agent's answer to identify (device-agent/src/api.ts, DoorAnswer). */
interface DoorAnswer {
  outcome: 'success' | 'denied' | 'liveness_failed' | 'geofence_alert';
  reason: 'not_recognised' | 'capacity_reached' | 'event_closed' | 'method_not_allowed' | null;
  guest: { displayName: string } | null;
}
type PublicBranding = z.infer<typeof PublicBrandingSchema>;
interface AgentStatus {
  online: boolean;
  queueLength: number;
}
interface Challenge {
  nonce: string;
  action: 'blink' | 'turn_head';
}

const params = new URLSearchParams(location.search);
const token = params.get('event') ?? '';
const CACHE_KEY = `portico.kiosk.branding.${token}`;
// How long each result stays before the kiosk goes back to attract by itself.
const RESULT_MS = { success: 5000, other: 9000 };
const ACTION_MS = 3000;
const ACTION_FRAMES = 7;

// Figures the browser test prints (issue targets: first paint, last frame -> result, long tasks).
const metrics = { attractPaintMs: -1, lastFrameToResultMs: [] as number[], longTasksMs: [] as number[] };
(window as unknown as { kioskMetrics: typeof metrics }).kioskMetrics = metrics;
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) metrics.longTasksMs.push(Math.round(e.duration));
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
  const title = b?.displayName ?? branding?.name ?? '';
  show(
    'attract',
    ...(b?.logoUrl ? [h('img', { class: 'logo', src: b.logoUrl, alt: '' })] : []),
    h('h1', {}, title),
    ...(b?.welcomeText ? [h('p', { class: 'welcome-text' }, b.welcomeText)] : []),
    h('button', { id: 'start', class: 'primary' }, t.tapToStart),
    h('button', { id: 'qr-start', class: 'secondary' }, t.qrStart),
  );
  root
    .querySelector('main')!
    .addEventListener(
      'click',
      (e) => void ((e.target as Element).closest('#qr-start') ? qrFlow() : startFlow()),
      { once: true },
    );
}

async function openCamera(): Promise<boolean> {
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
  const started = performance.now();
  while (mine === run) {
    if (performance.now() - started > QR_WAIT_MS) return attract();
    grab.width = video.videoWidth;
    grab.height = video.videoHeight;
    const ctx = grab.getContext('2d', { willReadFrequently: true })!;
    ctx.drawImage(video, 0, 0);
    const found = jsQR(ctx.getImageData(0, 0, grab.width, grab.height).data, grab.width, grab.height, {
      inversionAttempts: 'dontInvert',
    });
    if (found?.data) {
      show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, t.checking));
      try {
        const answer = await agent<DoorAnswer>('POST', `/events/${encodeURIComponent(token)}/qr`, {
          code: found.data,
        });
        if (mine === run) showAnswer(answer.status, answer.body, 'qr');
      } catch {
        result('error', t.unavailable, t.unavailableSub, false);
      }
      return;
    }
    await sleep(200);
  }
}

function stopCamera() {
  stream?.getTracks().forEach((track) => track.stop());
  stream = null;
  video.srcObject = null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startFlow() {
  const mine = ++run;
  const hint = h('p', { class: 'hint', id: 'hint' }, t.fitOval);
  show('camera', h('div', { class: 'stage' }, video, h('div', { class: 'oval' })), hint);
  if (!(await openCamera())) return;
  // The face guide: the browser judges the light; whether a face is in the oval is the agent's
  // detector's answer (a 422 no_face_detected sends the guest back here with that hint).
  let goodFor = 0;
  for (let waited = 0; goodFor < 800; waited += 200) {
    if (mine !== run) return;
    if (waited > 20_000) return attract();
    const dark = brightness() < 45;
    hint.textContent = dark ? t.tooDark : t.fitOval;
    hint.classList.toggle('warn', dark);
    goodFor = dark ? 0 : goodFor + 200;
    await sleep(200);
  }
  await challenge(mine);
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

async function challenge(mine: number) {
  let c: Challenge;
  try {
    c = (await agent<Challenge>('GET', '/challenge')).body;
  } catch {
    return result('error', t.unavailable, t.unavailableSub, false);
  }
  const frames: string[] = [];
  stepScreen(1, 2, t.lookAtCamera, 1);
  await sleep(1000);
  if (mine !== run) return;
  frames.push(frame());

  const count = stepScreen(2, 2, c.action === 'blink' ? t.blink : t.turnHead, ACTION_MS / 1000);
  const started = performance.now();
  for (let i = 0; i < ACTION_FRAMES; i++) {
    await sleep(ACTION_MS / ACTION_FRAMES);
    if (mine !== run) return;
    frames.push(frame());
    count.textContent = String(Math.max(1, Math.ceil((ACTION_MS - (performance.now() - started)) / 1000)));
  }
  const lastFrameAt = performance.now();
  show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, t.checking));

  let answer: { status: number; body: DoorAnswer & { code?: string } };
  try {
    answer = await agent<DoorAnswer>('POST', `/events/${encodeURIComponent(token)}/identify`, {
      frames,
      nonce: c.nonce,
    });
  } catch {
    return result('error', t.unavailable, t.unavailableSub, false);
  }
  if (mine !== run) return;
  showAnswer(answer.status, answer.body);
  requestAnimationFrame(() =>
    requestAnimationFrame(() =>
      metrics.lastFrameToResultMs.push(Math.round(performance.now() - lastFrameAt)),
    ),
  );
}

function showAnswer(status: number, a: DoorAnswer & { code?: string }, method: 'face' | 'qr' = 'face') {
  if (status === 422) return result('no-face', t.noFace, '', true);
  if (status !== 200) return result('error', t.unavailable, t.unavailableSub, false);
  if (a.outcome === 'success') {
    const first = (a.guest?.displayName ?? '').trim().split(/\s+/)[0] ?? '';
    return result('welcome', t.welcome(first.charAt(0).toUpperCase() + first.slice(1)), t.welcomeSub, false);
  }
  if (a.outcome === 'liveness_failed')
    return result('liveness-failed', t.livenessFailed, t.livenessFailedSub, true);
  if (a.outcome === 'geofence_alert') return result('geofence', t.geofence, t.geofenceSub, false);
  if (a.reason === 'event_closed') return result('closed', t.closed, t.closedSub, false);
  if (a.reason === 'capacity_reached') return result('full', t.full, t.fullSub, false);
  if (a.reason === 'method_not_allowed') return result('closed', t.methodNotAllowed, t.unavailableSub, false);
  if (method === 'qr') return result('not-recognised', t.qrUnknown, t.qrUnknownSub, false);
  return result('not-recognised', t.notRecognised, t.notRecognisedSub, true);
}

function result(kind: string, title: string, sub: string, retry: boolean) {
  stopCamera();
  const icon =
    kind === 'welcome' ? '✓' : kind === 'error' || kind === 'closed' || kind === 'full' ? '!' : '✕';
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

function watchStatus() {
  const source = new EventSource('/agent/status/stream');
  source.onmessage = (message) => {
    const s = JSON.parse(message.data as string) as AgentStatus;
    banner.hidden = s.online;
    banner.textContent = s.online ? '' : t.offline(s.queueLength);
  };
}

applyBranding();
attract();
requestAnimationFrame(() => (metrics.attractPaintMs = Math.round(performance.now())));
watchStatus();
void refreshBranding();
