// The camera: one video element for every screen that shows it, frames for the agent, the light, QR
// codes read in the page (jsQR), and where the face is for the live guide: MediaPipe in the page at the
// camera's frame rate when it loads (face-detector.ts), else the agent's detector by a round trip.
import type { AgentFaceBox } from '@portico/contract';
import jsQRModule from 'jsqr';
import { agent } from './agent-client.js';
import { loadFaceDetector, type InPageDetector } from './face-detector.js';
import type { FaceBox } from './guide.js';
import { metrics } from './metrics.js';

// jsqr is CommonJS: TypeScript sees the module object, esbuild hands over the function; the package sets
// `jsQR.default = jsQR`, so `.default` is the decoder either way.
const jsQR = jsQRModule.default;

export const video = document.createElement('video');
video.muted = true;
video.playsInline = true;
video.autoplay = true;
let stream: MediaStream | null = null;

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Opens the camera, or keeps it open; false when the browser refuses it (no camera, no permission). */
export async function openCamera(): Promise<boolean> {
  if (stream?.active) {
    if (video.srcObject !== stream) video.srcObject = stream;
    return true;
  }
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 }, audio: false });
  } catch {
    return false;
  }
  video.srcObject = stream;
  while (video.videoWidth === 0) await sleep(50);
  return true;
}

export function stopCamera() {
  stream?.getTracks().forEach((track) => track.stop());
  stream = null;
  video.srcObject = null;
}

const grab = document.createElement('canvas');
/** The current picture as a base64 JPEG (no data-URL prefix), for the agent. */
export function frame(): string {
  grab.width = video.videoWidth;
  grab.height = video.videoHeight;
  grab.getContext('2d')!.drawImage(video, 0, 0);
  return grab.toDataURL('image/jpeg', 0.85).slice('data:image/jpeg;base64,'.length);
}

const probe = document.createElement('canvas');
/** Mean luma of the picture (0-255), from a 32x24 copy. */
export function brightness(): number {
  probe.width = 32;
  probe.height = 24;
  const ctx = probe.getContext('2d', { willReadFrequently: true })!;
  ctx.drawImage(video, 0, 0, 32, 24);
  const px = ctx.getImageData(0, 0, 32, 24).data;
  let sum = 0;
  for (let i = 0; i < px.length; i += 4) sum += 0.299 * px[i]! + 0.587 * px[i + 1]! + 0.114 * px[i + 2]!;
  return sum / (px.length / 4);
}

/** The text of the first QR code the camera shows within `waitMs`; null: none, or `signal` aborted. */
export async function scanQr(signal: AbortSignal, waitMs: number): Promise<string | null> {
  const started = performance.now();
  while (!signal.aborted && performance.now() - started < waitMs) {
    grab.width = video.videoWidth;
    grab.height = video.videoHeight;
    const ctx = grab.getContext('2d', { willReadFrequently: true })!;
    ctx.drawImage(video, 0, 0);
    const found = jsQR(ctx.getImageData(0, 0, grab.width, grab.height).data, grab.width, grab.height, {
      inversionAttempts: 'dontInvert',
    });
    if (found?.data) return found.data;
    await sleep(200, signal);
  }
  return null;
}

let detector: Promise<InPageDetector | null> | null = null;
const small = document.createElement('canvas');
/** With the detector in the page, how often a look that found no face asks the agent too (`far`). */
const AGENT_CHECK_MS = 500;
let agentAskedAt = -Infinity;

/**
 * Where the face is in the current picture; null: no face; undefined: nobody can say (the detector
 * did not load and the agent has no face engine or does not answer). `far`: the page's detector misses
 * faces smaller than a fifth of the picture, which the agent's finds; when it sees none, ask the agent
 * every AGENT_CHECK_MS, so that a guest far away hears "come closer".
 */
export async function locateFace(far = false): Promise<FaceBox | null | undefined> {
  detector ??= loadFaceDetector();
  let inPage = await detector;
  const started = performance.now();
  let face: FaceBox | null | undefined;
  if (inPage) {
    try {
      face = inPage.detect(video, started);
      metrics.guideLooks.page++;
    } catch (error) {
      // It loads but cannot run on this browser (seen: Chromium without any WebGL, under Xvfb with
      // the GPU off): the agent's detector from now on.
      console.warn('[kiosk] the in-page face detector failed; the agent finds faces instead', error);
      inPage.close();
      inPage = null;
      detector = Promise.resolve(null);
    }
  }
  metrics.guide = inPage ? 'page' : 'agent';
  if (!inPage || (face === null && far && started - agentAskedAt >= AGENT_CHECK_MS)) {
    agentAskedAt = started;
    const asked = await askAgent();
    metrics.guideLooks.agent++;
    face = inPage ? (asked ?? null) : asked;
  }
  metrics.guideMs.push(Math.round((performance.now() - started) * 10) / 10);
  metrics.guideAt.push(Math.round(started * 10) / 10);
  if (metrics.guideMs.length > 50) {
    metrics.guideMs.shift();
    metrics.guideAt.shift();
  }
  return face;
}

/** The agent's detector on a 320x240 copy, encoded off the main thread. */
async function askAgent(): Promise<FaceBox | null | undefined> {
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
    return answer.status === 200 ? answer.body.face : undefined;
  } catch {
    return undefined;
  }
}
