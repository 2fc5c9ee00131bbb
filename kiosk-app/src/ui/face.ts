// The face flow, without a touch: the attract screen watches the camera; a face coming into view opens
// the live guide; once the face is well placed the kiosk takes two frames a moment apart (the passive
// look) and the agent decides on them when their passive liveness score is clear, or asks for the
// active challenge (blink, or turn the head), whose frames follow. Then the result, and back to attract,
// which waits for the person to step away before it starts again.
import type { AgentChallenge } from '@portico/contract';
import { agent } from './agent-client.js';
import { screenAfter, type IdentifyReply } from './answers.js';
import { brightness, frame, locateFace, openCamera, sleep, video } from './camera.js';
import { eventPath, failure, go, h, kiosk, root, show, wait, type Arrival, type Handler } from './core.js';
import { framingFix, type Fix } from './guide.js';
import { afterPaint, metrics } from './metrics.js';

/** How often the guide looks: every frame's worth in the page; a round trip to the agent costs more. */
const LOOK_EVERY_MS = { page: 40, agent: 150 };
/**
 * Once attract's looks have seen nobody for IDLE_AFTER_MS, it pauses IDLE_LOOK_EVERY_MS between looks,
 * and goes back to full pace from the first face it sees (whose arrival it then confirms). A kiosk
 * waits on attract most of the day, and each look in the page costs about 30 ms of CPU without a GPU
 * (the browser's cores at each pace: kiosk.test.ts prints them, docs/kiosk-and-field/kiosk-screens.md
 * keeps them); a queue (people a few seconds apart) never leaves full pace.
 * The price: a first face after a quiet spell is seen up to 160 ms later (350 ms by the agent's detector).
 */
const IDLE_AFTER_MS = 5_000;
const IDLE_LOOK_EVERY_MS = { page: 200, agent: 500 };
/** A face seen this long on attract starts the flow (two looks or more: not a passing glimpse). */
const ARRIVE_MS = 120;
/** Nobody in view this long re-arms attract (after a result the person steps away first). */
const LEAVE_MS = 700;
/** The face well placed this long before the frames are taken. */
const HOLD_MS = 300;
/** Between the passive look's two frames: enough for a live face to move a little. */
const LOOK_GAP_MS = 180;
const ACTION_MS = 3000;
const ACTION_FRAMES = 7;
/** A retake's advice stays this long before the live guide speaks again. */
const RETAKE_HOLD_MS = 2500;
/** The guide gives up on a face never well placed, and the kiosk returns to attract. */
const GUIDE_GIVES_UP_MS = 20_000;
const RESULT_MS = { welcome: 2500, other: 8000 };
/** A long press this long on attract's top-right corner opens the staff PIN pad. */
const STAFF_PRESS_MS = 2000;

const lookEvery = (idle = false) => (idle ? IDLE_LOOK_EVERY_MS : LOOK_EVERY_MS)[metrics.guide ?? 'agent'];

export const attract: Handler<'attract'> = async ({ armed }, signal) => {
  const { t, branding, agentEventName } = kiosk;
  const b = branding?.branding;
  const hint = h('p', { class: 'hint', id: 'hint' }, t.lookToStart);
  const main = show(
    'attract',
    ...(b?.logoUrl ? [h('img', { class: 'logo', src: b.logoUrl, alt: '' })] : []),
    h('h1', {}, b?.displayName ?? branding?.name ?? agentEventName ?? ''),
    ...(b?.welcomeText ? [h('p', { class: 'welcome-text' }, b.welcomeText)] : []),
    h('div', { class: 'stage attract-stage' }, video, h('div', { class: 'oval' })),
    hint,
    h('button', { id: 'qr-start', class: 'secondary' }, t.qrStart),
    h('button', { id: 'staff-open', class: 'staff-corner', 'aria-label': t.staff }),
  );
  main.dataset.armed = String(armed);
  // A touch anywhere but the two buttons starts too (a face the camera does not pick up, a guest who
  // prefers to).
  main.addEventListener('click', (e) => {
    const target = e.target as Element;
    if (target.closest('#staff-open')) return;
    if (target.closest('#qr-start')) return go({ kind: 'qr' });
    go({ kind: 'camera', arrival: { at: performance.now(), retakes: 0, challenged: false } });
  });
  // Staff: a long press (2 s) on the corner; a short touch there does nothing.
  const corner = main.querySelector('#staff-open')!;
  let press: number | undefined;
  corner.addEventListener('pointerdown', () => {
    press = window.setTimeout(() => go({ kind: 'staff-pin', then: 'search' }), STAFF_PRESS_MS);
  });
  for (const end of ['pointerup', 'pointerleave', 'pointercancel']) {
    corner.addEventListener(end, () => clearTimeout(press));
  }
  signal.addEventListener('abort', () => clearTimeout(press));
  if (!(await openCamera())) {
    hint.textContent = t.tapToStart;
    return;
  }
  main.dataset.idle = 'false';
  const next = await watchForArrival(
    signal,
    armed,
    Infinity,
    () => (main.dataset.armed = 'true'),
    (idle) => (main.dataset.idle = String(idle)),
  );
  if (signal.aborted) return;
  // Nobody can see faces (no detector in the page, no face engine on the agent): touch to start.
  if (next === 'blind') hint.textContent = t.tapToStart;
  else if (next !== null) go({ kind: 'camera', arrival: next });
};

/**
 * Watches the camera for the next person: once nobody has been in view for LEAVE_MS (at once when
 * `armed`), a face seen for ARRIVE_MS is an arrival. Null when `forMs` passes first; `blind` when
 * nobody can tell where faces are. `onPace` hears when it goes to the idle pace (IDLE_AFTER_MS) and back.
 */
async function watchForArrival(
  signal: AbortSignal,
  armed: boolean,
  forMs: number,
  onArmed: () => void,
  onPace: (idle: boolean) => void = () => {},
): Promise<Arrival | 'blind' | null> {
  const ends = performance.now() + forMs;
  let seenSince = 0;
  // Nobody in view since the first look that saw nobody (the detector may still be loading before it).
  let awaySince = 0;
  let idle = false;
  while (!signal.aborted && performance.now() < ends) {
    const face = await locateFace();
    if (signal.aborted) break;
    const now = performance.now();
    if (face === undefined) return 'blind';
    if (face) {
      seenSince ||= now;
      awaySince = 0;
    } else {
      seenSince = 0;
      awaySince ||= now;
    }
    if (!armed && awaySince && now - awaySince >= LEAVE_MS) {
      armed = true;
      onArmed();
    }
    if (armed && seenSince && now - seenSince >= ARRIVE_MS) {
      return { at: seenSince, retakes: 0, challenged: false };
    }
    const nowIdle = awaySince > 0 && now - awaySince >= IDLE_AFTER_MS;
    // Told only when it changes: the screen's attribute is not written at every look.
    if (nowIdle !== idle) {
      idle = nowIdle;
      onPace(idle);
    }
    await sleep(Math.min(lookEvery(idle), Math.max(0, ends - now)), signal);
  }
  return null;
}

/**
 * The live guide (light in the page; distance and centring from where the face is), then the passive
 * look. After a `face_retake` the camera stays on and the worst reason is shown for RETAKE_HOLD_MS.
 */
export const camera: Handler<'camera'> = async ({ arrival, retake }, signal) => {
  const { t } = kiosk;
  const advice = retake?.[0];
  const hint = h('p', { class: 'hint', id: 'hint' }, advice ? t.retake[advice] : t.fitOval);
  const main = show(
    'camera',
    // Why the person is back at the camera: the picture, not them.
    ...(advice ? [h('p', { class: 'step', id: 'retake-why' }, t.retakeWhy)] : []),
    h('div', { class: 'stage' }, video, h('div', { class: 'oval' })),
    hint,
  );
  if (advice) {
    hint.classList.add('warn');
    hint.dataset.retake = advice;
    main.dataset.retake = advice;
  }
  if (!(await openCamera())) return go(failure(kiosk.t.cameraBlocked));
  if (advice) {
    await sleep(RETAKE_HOLD_MS, signal);
    delete hint.dataset.retake;
  }
  // Without anyone to say where the face is, the light alone gates (the agent then says "no face").
  let guided = true;
  let goodSince = 0;
  const started = performance.now();
  for (;;) {
    if (signal.aborted) return;
    if (performance.now() - started > GUIDE_GIVES_UP_MS) return go({ kind: 'attract', armed: false });
    let fix: Fix | 'tooDark' | null = brightness() < 45 ? 'tooDark' : null;
    if (!fix && guided) {
      const face = await locateFace(true);
      if (signal.aborted) return;
      if (face === undefined) guided = false;
      else fix = framingFix(face);
    }
    hint.textContent = fix ? t[fix === 'noFace' ? 'fitOval' : fix] : guided ? t.holdStill : t.fitOval;
    hint.classList.toggle('warn', fix !== null);
    hint.dataset.fix = fix ?? 'ok';
    if (fix) goodSince = 0;
    else if (!goodSince) goodSince = performance.now();
    else if (performance.now() - goodSince >= HOLD_MS) break;
    await sleep(guided ? lookEvery() : 200, signal);
  }
  // The passive look: two frames, each sent as soon as it is taken and analysed meanwhile.
  const challenge = (await agent<AgentChallenge>('GET', '/challenge')).body;
  const stream = streamer(challenge.nonce);
  stream.take();
  await sleep(LOOK_GAP_MS, signal);
  if (signal.aborted) return;
  stream.take();
  const answer = await stream.identify({ nonce: challenge.nonce, passive: true });
  if (!signal.aborted) go(screenAfter(answer, 'face', arrival));
};

/** The active challenge: the action for ACTION_MS, ACTION_FRAMES frames streamed as they are taken. */
export const challenge: Handler<'challenge'> = async ({ arrival, nonce, action }, signal) => {
  const { t } = kiosk;
  const count = h('div', { class: 'countdown', id: 'countdown' }, String(ACTION_MS / 1000));
  show(
    'challenge',
    h('div', { class: 'stage' }, video, h('div', { class: 'oval' }), count),
    h('p', { class: 'step' }, t.challengeWhy),
    h('p', { class: 'instruction', id: 'instruction' }, action === 'blink' ? t.blink : t.turnHead),
  );
  if (!(await openCamera())) return go(failure(kiosk.t.cameraBlocked));
  const stream = streamer(nonce);
  const started = performance.now();
  for (let i = 0; i < ACTION_FRAMES; i++) {
    await sleep(ACTION_MS / ACTION_FRAMES, signal);
    if (signal.aborted) return;
    stream.take();
    count.textContent = String(Math.max(1, Math.ceil((ACTION_MS - (performance.now() - started)) / 1000)));
  }
  const lastFrameAt = performance.now();
  const waiting = wait();
  const answer = await stream.identify({ nonce });
  if (!waiting()) return;
  afterPaint((at) => metrics.lastFrameToResultMs.push(Math.round(at - lastFrameAt)));
  go(screenAfter(answer, 'face', arrival));
};

/**
 * Frames of a challenge posted one after the other as they are taken (the agent analyses each on
 * arrival); identify once the last is in. A post that fails stops the stream, and identify then
 * answers what the agent makes of the frames it has (none: 400 `no_frames`, shown as unavailable).
 */
function streamer(nonce: string) {
  let posted = Promise.resolve(true);
  const path = `/challenge/${encodeURIComponent(nonce)}/frames`;
  return {
    take() {
      const f = frame();
      posted = posted.then(
        (ok) =>
          ok &&
          agent('POST', path, { frame: f }).then(
            (r) => r.status === 202,
            () => false,
          ),
      );
    },
    async identify(body: { nonce: string; passive?: true }): Promise<IdentifyReply> {
      await posted;
      return agent('POST', `${eventPath}/identify`, body) as Promise<IdentifyReply>;
    },
  };
}

export const checking: Handler<'checking'> = () => {
  show('checking', h('div', { class: 'spinner' }), h('p', { class: 'instruction' }, kiosk.t.checking));
};

export const result: Handler<'result'> = async ({ look, title, sub, retry, arrival }, signal) => {
  const { t } = kiosk;
  const icon =
    look === 'welcome' ? '✓' : ['error', 'closed', 'full', 'already-in'].includes(look) ? '!' : '✕';
  const main = show(
    `result ${look}`,
    h('div', { class: 'icon', 'aria-hidden': 'true' }, icon),
    h('h1', { id: 'result-title' }, title),
    ...(sub ? [h('p', { class: 'sub' }, sub)] : []),
    ...(retry ? [h('button', { id: 'retry', class: 'primary' }, t.tryAgain)] : []),
    // The camera keeps watching, out of sight, for the next guest.
    h('div', { class: 'offstage', 'aria-hidden': 'true' }, video),
  );
  main.dataset.armed = 'false';
  root.querySelector('#retry')?.addEventListener('click', () => {
    go({ kind: 'camera', arrival: { at: performance.now(), retakes: 0, challenged: false } });
  });
  if (arrival) {
    afterPaint((at) => {
      metrics.faceInViewToResultMs.push(Math.round(at - arrival.at));
      metrics.challenged.push(arrival.challenged);
      metrics.resultsAt.push(Math.round(at));
    });
  }
  // The person is probably still in front of the camera. Once they step away, the next guest coming
  // into view starts at once, without waiting for this result to end.
  let armed = false;
  const showFor = look === 'welcome' ? RESULT_MS.welcome : RESULT_MS.other;
  const next = (await openCamera())
    ? await watchForArrival(signal, false, showFor, () => {
        armed = true;
        main.dataset.armed = 'true';
      })
    : await sleep(showFor, signal).then(() => null);
  if (signal.aborted) return;
  if (next !== null && next !== 'blind') return go({ kind: 'camera', arrival: next });
  if (next === 'blind') await sleep(showFor, signal);
  if (!signal.aborted) go({ kind: 'attract', armed });
};
