// QR codes at the door: QR mode (the guest shows their invitation instead of their face) and the
// step-up (a face between the two lines proves who it is with the invitation's QR code, or staff).
// The camera reads codes in the page (jsQR) and only their text goes to the agent.
import { agent } from './agent-client.js';
import { screenAfter, type IdentifyReply } from './answers.js';
import { openCamera, scanQr, sleep, stopCamera, video } from './camera.js';
import { eventPath, failure, go, h, kiosk, show, wait, type Handler } from './core.js';

const QR_WAIT_MS = 30_000;

export const qr: Handler<'qr'> = async (_screen, signal) => {
  show(
    'qr',
    h('div', { class: 'stage' }, video, h('div', { class: 'square' })),
    h('p', { class: 'hint' }, kiosk.t.showQr),
  );
  if (!(await openCamera())) return go(failure(kiosk.t.cameraBlocked));
  const code = await scanQr(signal, QR_WAIT_MS);
  if (signal.aborted) return;
  if (code === null) return go({ kind: 'attract', armed: false });
  const waiting = wait();
  const answer = (await agent('POST', `${eventPath}/qr`, { code })) as IdentifyReply;
  if (waiting()) go(screenAfter(answer, 'qr'));
};

/**
 * The person shows their invitation QR code (the camera as in QR mode) or asks staff, who confirm with
 * their PIN after checking a document. Back to attract when the agent's step-up expires.
 */
export const stepUp: Handler<'step-up'> = async ({ stepUp: s }, signal) => {
  const { t } = kiosk;
  const qrAllowed = s.factors.includes('qr');
  const staffAllowed = s.factors.includes('staff');
  const leftMs = Math.min(60_000, Math.max(0, Date.parse(s.expiresAt) - Date.now()));
  const endsAt = performance.now() + leftMs;
  const count = h('div', { class: 'countdown', id: 'countdown' }, String(Math.ceil(leftMs / 1000)));
  const main = show(
    'step-up',
    h('h1', { id: 'step-up-title' }, t.stepUpTitle),
    h(
      'p',
      { class: 'sub' },
      qrAllowed && staffAllowed ? t.stepUpSub : qrAllowed ? t.stepUpQrOnly : t.stepUpStaffOnly,
    ),
    ...(qrAllowed ? [h('div', { class: 'stage small' }, video, h('div', { class: 'square' }), count)] : []),
    ...(staffAllowed ? [h('button', { id: 'step-up-staff', class: 'secondary' }, t.stepUpStaffButton)] : []),
  );
  main.querySelector('#step-up-staff')?.addEventListener('click', () => {
    go({ kind: 'staff-pin', then: { stepUp: s } });
  });
  // The seconds left, on the camera picture, until the QR code is read or the screen changes.
  const tick = window.setInterval(() => {
    count.textContent = String(Math.max(0, Math.ceil((endsAt - performance.now()) / 1000)));
  }, 1000);
  signal.addEventListener('abort', () => clearInterval(tick));
  const expired = sleep(leftMs, signal).then(() => {
    if (!signal.aborted) go({ kind: 'attract', armed: false });
  });
  if (!qrAllowed) {
    stopCamera();
    return expired;
  }
  if (!(await openCamera())) return go(failure(kiosk.t.cameraBlocked));
  const code = await scanQr(signal, leftMs);
  if (code === null || signal.aborted) return;
  const waiting = wait();
  const answer = (await agent('POST', `/step-up/${encodeURIComponent(s.attemptId)}`, {
    factor: 'qr',
    code,
  })) as IdentifyReply;
  if (waiting()) go(screenAfter(answer, 'step-up'));
};
