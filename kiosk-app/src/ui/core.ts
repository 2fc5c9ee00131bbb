// The kiosk's screen state: one `Screen` union of everything the kiosk can show, and one transition
// function, `go`, that leaves the current screen (its timers, loops and requests stop with its
// AbortSignal; the camera closes unless the next screen shows it) and enters the next. Each screen's
// handler renders it and runs its flow (face.ts, qr.ts, staff.ts; app.ts wires them).
import type {
  AgentChallenge,
  AgentStepUpRequired,
  PublicBranding as PublicBrandingSchema,
  StaffGuests,
  z,
} from '@portico/contract';
import { stopCamera } from './camera.js';
import { textsFor } from './texts.js';

export type RetakeReason = 'move_closer' | 'hold_still' | 'more_light' | 'face_the_camera';
export type StaffGuest = StaffGuests['items'][number];
export type Branding = z.infer<typeof PublicBrandingSchema>;

/** A person's way through the face flow: when their face came into view (or they touched the screen). */
export interface Arrival {
  at: number;
  /** Retakes so far (a picture too poor to judge sends them back to the camera). */
  retakes: number;
  challenged: boolean;
}

export type Screen =
  /** The event's welcome; the camera watches for a face (`armed` once nobody is in view). */
  | { kind: 'attract'; armed: boolean }
  /** The live guide until the face is well placed, then the passive look. */
  | { kind: 'camera'; arrival: Arrival; retake?: RetakeReason[] }
  /** The active challenge, when the passive look left liveness open. */
  | { kind: 'challenge'; arrival: Arrival; nonce: string; action: AgentChallenge['action'] }
  | { kind: 'checking' }
  | {
      kind: 'result';
      look: string;
      title: string;
      sub: string;
      retry: boolean;
      arrival?: Arrival;
    }
  /** A face between the two lines: the invitation QR code, or staff. */
  | { kind: 'step-up'; stepUp: AgentStepUpRequired }
  | { kind: 'qr' }
  | { kind: 'staff-pin'; then: 'search' | { stepUp: AgentStepUpRequired } }
  | { kind: 'staff-search' }
  | { kind: 'staff-result'; look: string; title: string; admitted: boolean }
  | { kind: 'step-up-confirm'; stepUp: AgentStepUpRequired; name: string };

export type ScreenKind = Screen['kind'];
export type Handler<K extends ScreenKind> = (
  screen: Extract<Screen, { kind: K }>,
  signal: AbortSignal,
) => void | Promise<void>;
export type Handlers = { [K in ScreenKind]: Handler<K> };

/**
 * Screens that use the camera (the result watches for the next guest, out of sight): going from one to
 * another keeps it open (no new permission, no delay).
 */
const CAMERA_SCREENS = new Set<ScreenKind>([
  'attract',
  'camera',
  'challenge',
  'checking',
  'result',
  'qr',
  'step-up',
]);

const params = new URLSearchParams(location.search);
/** The event this kiosk serves: its public token. */
export const token = params.get('event') ?? '';
export const eventPath = `/events/${encodeURIComponent(token)}`;

export const kiosk = {
  branding: null as Branding | null,
  /** The event's name as the agent's replica has it (before the cloud's branding arrives). */
  agentEventName: null as string | null,
  ...textsFor(undefined),
};

export const root = document.getElementById('app')!;
let handlers: Handlers | null = null;
let leaving = new AbortController();
let current: Screen = { kind: 'attract', armed: true };

export function currentScreen(): Screen {
  return current;
}

export function start(all: Handlers, first: Screen) {
  handlers = all;
  go(first);
}

/** Leaves the current screen and enters `next`. */
export function go(next: Screen) {
  leaving.abort();
  leaving = new AbortController();
  const { signal } = leaving;
  current = next;
  if (!CAMERA_SCREENS.has(next.kind)) stopCamera();
  const handler = handlers![next.kind] as Handler<typeof next.kind>;
  Promise.resolve()
    .then(() => handler(next as never, signal))
    .catch((error: unknown) => {
      console.error('[kiosk]', error);
      // Left for a waiting screen of its own (`wait`): nobody else will leave that one.
      if (!signal.aborted || current.kind === 'checking') go(failure());
    });
}

/**
 * Enters a waiting screen (`checking`) while the current flow goes on: the answer tells whether that
 * screen is still the current one when the awaited answer arrives.
 */
export function wait(next: Screen = { kind: 'checking' }): () => boolean {
  go(next);
  return () => current === next;
}

/** The result screen for a failure the guest cannot fix: the agent not answering, a broken answer. */
export function failure(title = kiosk.t.unavailable): Screen {
  return { kind: 'result', look: 'error', title, sub: kiosk.t.unavailableSub, retry: false };
}

export function h(
  tag: string,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

/** Renders a screen: `look` is its CSS classes and `data-screen` (the kind first). */
export function show(look: string, ...children: Node[]): HTMLElement {
  const main = h('main', { class: `screen ${look}`, 'data-screen': look }, ...children);
  root.replaceChildren(main);
  return main;
}
