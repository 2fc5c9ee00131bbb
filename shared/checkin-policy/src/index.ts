/**
 * @portico/checkin-policy: the decision of a check-in, pure, shared by the cloud and the device agent
 * so both decide alike: the face decision (probe quality, passive liveness, the calibrated score
 * against the tenant's accept and refuse lines), the event's rules (status, methods, re-entry,
 * capacity), the geofence, and the flags the cloud sets on a fact a device decided.
 */

export type Outcome = 'success' | 'denied' | 'liveness_failed' | 'geofence_alert';
export type DenialReason =
  | 'not_recognised'
  | 'capacity_reached'
  | 'event_closed'
  | 'method_not_allowed'
  | 'already_checked_in'
  | 'step_up_failed';
export type FaceAnswer = 'accept' | 'step_up' | 'refuse' | 'retake' | 'liveness_failed';
export type Geofence = 'ok' | 'outside' | 'unknown' | 'not_applicable';
/** Where the cloud, re-checking a synced fact, would have decided otherwise (contract `SyncFlag`). */
export type SyncFlag = 'event_closed' | 'capacity_reached' | 'method_not_allowed' | 'already_checked_in';

export interface Decision {
  outcome: Outcome;
  reason: DenialReason | null;
}

export interface FacePolicy {
  /** Accept line: a calibrated score at or above it admits on the face alone. */
  matchThreshold: number;
  /** Refuse line: below it the face is refused; from it up to the accept line, a second factor decides. */
  stepUpThreshold: number;
  /** A probe below this quality is not judged: the person is asked to try again (`retake`). */
  probeQualityMin: number;
  requireLiveness: boolean;
  livenessThreshold: number;
}

/**
 * Defaults of the face lines, chosen on real-world photos (lfw-dev, 1,000 people enrolled with one
 * photo each; face engine README, "Identification"): the accept line where about 3 in 10,000
 * strangers get in, the refuse line under which about 1.3 % of enrolled people fall (mostly those
 * whose best candidate is someone else), and a quality floor that only sends back faces too small,
 * dark or turned to judge (on those photos a stricter floor removed no error).
 */
export const FACE_LINE_DEFAULTS = {
  matchThreshold: 0.57,
  stepUpThreshold: 0.35,
  probeQualityMin: 0.3,
} as const;

/**
 * The tenant option `refreshTemplates`: a check-in accepted on the face alone at or above the accept
 * line + `margin` joins the person's template, which becomes the mean of their enrollment photos and
 * their last `keep` such check-ins. The cloud applies it and the evaluation measures it (face engine
 * `runRefresh`), both from this one rule.
 */
export const TEMPLATE_REFRESH = { margin: 0.1, keep: 2 } as const;

/** Whether a face answer refreshes the candidate's template (only an `accept` well above the line). */
export function refreshesTemplate(
  policy: Pick<FacePolicy, 'matchThreshold'>,
  answer: FaceAnswer,
  score: number,
): boolean {
  return answer === 'accept' && score >= policy.matchThreshold + TEMPLATE_REFRESH.margin;
}

/** What the person at the camera can fix when a probe is too poor to judge, worst first. */
export type RetakeReason = 'move_closer' | 'more_light' | 'face_the_camera';

/** The face engine's quality factors of a probe (each 0..1; FaceProbe.qualityFactors). */
export interface ProbeQuality {
  qualityFactors: { detector: number; size: number; sharpness: number; exposure: number; pose: number };
}

/**
 * The factors that decide a retake, and what each asks of the person. Sharpness is not one of them:
 * on real-world photos (lfw-dev) a soft face failed hardly more often than a sharp one, while a
 * small, badly lit, turned or half-detected face failed 5-20 times as often (face engine README,
 * "Identification").
 */
const GATES = {
  size: 'move_closer',
  exposure: 'more_light',
  pose: 'face_the_camera',
  detector: 'face_the_camera',
} as const satisfies Partial<Record<keyof ProbeQuality['qualityFactors'], RetakeReason>>;

/** The probe's worst gating factor: under the tenant's `probeQualityMin` it is not judged. */
export function probeQuality(probe: ProbeQuality): number {
  const f = probe.qualityFactors;
  return Math.min(f.size, f.exposure, f.pose, f.detector);
}

/** What to fix: the gating factors under `floor`, worst first, each reason once. */
export function retakeReasons(probe: ProbeQuality, floor: number): RetakeReason[] {
  const f = probe.qualityFactors;
  const low = (Object.keys(GATES) as Array<keyof typeof GATES>)
    .filter((k) => f[k] < floor)
    .sort((a, b) => f[a] - f[b])
    .map((k) => GATES[k]);
  return [...new Set(low)];
}

/**
 * The face decision, in this order: a probe too poor to judge is a `retake`; liveness (when required);
 * then the best candidate's calibrated score against the two lines: `accept` at or above the accept
 * line, `step_up` from the refuse line up to it, `refuse` below (or with no candidate).
 */
export function faceDecision(
  policy: FacePolicy,
  probe: ProbeQuality,
  best: { score: number } | undefined,
  livenessScore: number | null,
): FaceAnswer {
  if (probeQuality(probe) < policy.probeQualityMin) return 'retake';
  if (policy.requireLiveness && (livenessScore ?? 0) < policy.livenessThreshold) return 'liveness_failed';
  if (!best) return 'refuse';
  if (best.score >= policy.matchThreshold) return 'accept';
  return best.score >= Math.min(policy.stepUpThreshold, policy.matchThreshold) ? 'step_up' : 'refuse';
}

/**
 * When a door asks for the active challenge (tenant setting `livenessChallenge`): `when_uncertain` only
 * when the passive score of the first frames is neither clearly live nor clearly not; `always` on every
 * face, as before the setting existed (a device whose cloud sends no setting reads `always`).
 */
export type LivenessChallengeMode = 'when_uncertain' | 'always';
export const LIVENESS_CHALLENGE_MODES = [
  'when_uncertain',
  'always',
] as const satisfies readonly LivenessChallengeMode[];
export const LIVENESS_CHALLENGE_DEFAULT: LivenessChallengeMode = 'when_uncertain';

/**
 * The passive score every first frame must reach for the face to pass without the active challenge.
 * On real-world photos (lfw-dev, 857 faces, none a spoof) 75 % of faces score at least 0.9 and the two
 * presentation attacks of `../shared/faces/spoof` score under 0.004 (too few to measure an attack rate:
 * a tenant that must stop screens and prints at any cost sets `always`).
 */
export const PASSIVE_LIVE_LINE = 0.9;
/** Frames of the passive look (taken this far apart by the kiosk) before a door decides on them. */
export const PASSIVE_FRAMES = 2;

/**
 * Liveness from the passive look alone (the first frames of a challenge, before any action is asked):
 * `live` when every frame scores at least PASSIVE_LIVE_LINE and the frames are not all the same picture
 * (a still image fed to the camera repeats itself exactly), `spoof` when every frame scores under the
 * tenant's `livenessThreshold`, otherwise `challenge`: the person performs the active challenge, judged
 * with the passive score as before. Under `always`, or without liveness required, never `live` or
 * `spoof` (the caller judges as it always did).
 */
export function passiveLiveness(
  policy: Pick<FacePolicy, 'requireLiveness' | 'livenessThreshold'> & {
    livenessChallenge: LivenessChallengeMode;
  },
  frames: readonly { score: number; picture: string }[],
): 'live' | 'spoof' | 'challenge' {
  if (!policy.requireLiveness || policy.livenessChallenge === 'always' || frames.length === 0)
    return 'challenge';
  if (frames.every((f) => f.score < policy.livenessThreshold)) return 'spoof';
  const still = frames.every((f) => f.picture === frames[0]!.picture);
  return !still && frames.length >= PASSIVE_FRAMES && frames.every((f) => f.score >= PASSIVE_LIVE_LINE)
    ? 'live'
    : 'challenge';
}

/**
 * What an event does with a second admission of a subject (a guest or person) already admitted there:
 * `refuse` denies it (`already_checked_in`); `allow` admits it, the subject still taking one place of the
 * capacity, with no flag; `flag` admits it the same way and flags it `already_checked_in`.
 */
export type Reentry = 'refuse' | 'allow' | 'flag';
export const REENTRY_RULES = ['refuse', 'allow', 'flag'] as const satisfies readonly Reentry[];
/** What the cloud did with a returning face before events had the rule: admit, no flag. */
export const REENTRY_DEFAULT: Reentry = 'allow';

export interface EventRules {
  status: string;
  checkinMethods: readonly string[];
  capacity: number | null;
  /** Absent (a cloud, or a replica stored, from before the rule): REENTRY_DEFAULT. */
  reentry?: Reentry | undefined;
}

/**
 * The re-entry rule a check-in by `method` follows. Every passage through a door (face, QR code, staff
 * by hand, and the same decided on a device and synced) follows the event's rule. An invitation link
 * does not: it is the guest saying "I am here" from an e-mail that mail scanners and the guest open
 * again and again, not someone coming back in, so it checks a guest in once whatever the event's rule
 * (`refuse`; the cloud then records nothing for the visit, see `once` in the cloud's record.ts).
 */
export function reentryRule(event: Pick<EventRules, 'reentry'>, method: string): Reentry {
  return method === 'link' ? 'refuse' : (event.reentry ?? REENTRY_DEFAULT);
}

/** The event's answer for one subject: why not (null: admitted), and the flags an admission carries. */
export interface EventVerdict {
  denial: DenialReason | null;
  flags: SyncFlag[];
}

export interface GeofenceRules {
  lat: number | null;
  lng: number | null;
  radiusM: number | null;
}

const CLOSED = new Set(['closed', 'cancelled']);

/**
 * The event's rules for one subject, in this order: status, re-entry, method, capacity. `admitted`
 * counts the distinct persons or guests already in; a subject already in (`alreadyIn`) is refused,
 * admitted or admitted with the flag `already_checked_in` as the re-entry rule says, and never takes
 * a second place.
 */
export function eventVerdict(
  event: EventRules,
  method: string,
  subject: { admitted: number; alreadyIn: boolean },
): EventVerdict {
  const rule = reentryRule(event, method);
  const flags: SyncFlag[] = subject.alreadyIn && rule === 'flag' ? ['already_checked_in'] : [];
  const denial = (reason: DenialReason | null): EventVerdict => ({ denial: reason, flags });
  if (CLOSED.has(event.status)) return denial('event_closed');
  if (subject.alreadyIn && rule === 'refuse') return denial('already_checked_in');
  if (event.checkinMethods.length > 0 && !event.checkinMethods.includes(method)) {
    return denial('method_not_allowed');
  }
  if (event.capacity !== null && !subject.alreadyIn && subject.admitted >= event.capacity) {
    return denial('capacity_reached');
  }
  return denial(null);
}

/** The outcome of a recognised subject: denied with the rules' reason, else admitted (with a geofence alert). */
export function admission(reason: DenialReason | null, geofence: Geofence): Decision {
  return { outcome: reason ? 'denied' : geofence === 'outside' ? 'geofence_alert' : 'success', reason };
}

export const isAdmitted = (outcome: Outcome) => outcome === 'success' || outcome === 'geofence_alert';

/**
 * Undoing a check-in ("void"): staff take back an admission that should not have happened (the wrong
 * guest ticked at the door, a face matched to the wrong person, a test). Only an admission can be voided,
 * once. A voided admission counts for nothing in the event's rules: it takes no place of the capacity
 * (`admitted` counts only admissions that count) and is no earlier admission for re-entry (`alreadyIn`),
 * so the subject may come in again under any rule, `refuse` included, and takes one place again then.
 * A subject with another admission that still counts stays in (its place stays taken). The fact itself
 * stays on record, marked voided, with who voided it, when and why.
 */
export function countsAsAdmission(checkin: { outcome: Outcome; voided: boolean }): boolean {
  return isAdmitted(checkin.outcome) && !checkin.voided;
}

/** Why an admission cannot be voided (null: it can). */
export function voidRefusal(checkin: {
  outcome: Outcome;
  voided: boolean;
}): 'checkin_not_admitted' | 'already_voided' | null {
  if (!isAdmitted(checkin.outcome)) return 'checkin_not_admitted';
  return checkin.voided ? 'already_voided' : null;
}

const FLAGGED_DENIALS = new Set<DenialReason>([
  'event_closed',
  'capacity_reached',
  'method_not_allowed',
  'already_checked_in',
]);

/**
 * Flags of a fact a device decided: the device's admission stands, the cloud says where it disagrees
 * (the event's rules, re-checked when the fact arrives, would have refused it), plus the flags any
 * admission carries (re-entry under `flag`). So `already_checked_in` is a real disagreement: under
 * `refuse`, two doors admitted the same subject while apart; under `allow` a returning subject is no
 * flag at all. A device's refusal is never flagged.
 */
export function syncFlags(device: Decision, verdict: EventVerdict): SyncFlag[] {
  if (!isAdmitted(device.outcome)) return [];
  const { denial } = verdict;
  const disagreement = denial && FLAGGED_DENIALS.has(denial) ? [denial as SyncFlag] : [];
  return [...disagreement, ...verdict.flags.filter((f) => f !== denial)];
}

const EARTH_RADIUS_M = 6_371_008.8;

/** Great-circle distance in metres (haversine). */
export function distanceMetres(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** An event without its own radius uses the tenant's. */
export function geofenceStatus(
  event: GeofenceRules | null,
  location: { lat: number; lng: number } | undefined,
  tenantRadiusM: number,
): Geofence {
  if (!event || event.lat === null || event.lng === null) return 'not_applicable';
  if (!location) return 'unknown';
  const radius = event.radiusM ?? tenantRadiusM;
  return distanceMetres({ lat: event.lat, lng: event.lng }, location) <= radius ? 'ok' : 'outside';
}

/** The active liveness challenge's action: blink, or turn the head and come back. */
export type ChallengeAction = 'blink' | 'turn_head';

/** What the face engine tells of one frame for the active challenge (its `LivenessSignals`). */
export interface ChallengeCues {
  eyes: { leftOpen: boolean; rightOpen: boolean };
  pose: { yaw: number };
}

/** Yaw spread across the frames that counts as turning the head. */
export const TURN_DEGREES = 15;

const eyesOpen = (f: ChallengeCues) => f.eyes.leftOpen && f.eyes.rightOpen;
const eyesClosed = (f: ChallengeCues) => !f.eyes.leftOpen && !f.eyes.rightOpen;

/**
 * Whether the frames, in the order they were taken, show the action (the device agent's and the cloud's
 * rule). A blink: eyes open, later both closed, later open again. A head turn ("turn your head left,
 * then back"): a frame whose yaw is at least TURN_DEGREES away from an earlier frame's and from a later
 * frame's. The same frames in another order may not show it; the same frame repeated never does.
 */
export function actionPerformed(action: ChallengeAction, frames: readonly ChallengeCues[]): boolean {
  for (let j = 1; j < frames.length - 1; j++) {
    const middle = frames[j]!;
    const before = frames.slice(0, j);
    const after = frames.slice(j + 1);
    if (action === 'blink') {
      if (eyesClosed(middle) && before.some(eyesOpen) && after.some(eyesOpen)) return true;
    } else {
      const away = (f: ChallengeCues) => Math.abs(f.pose.yaw - middle.pose.yaw) >= TURN_DEGREES;
      if (before.some(away) && after.some(away)) return true;
    }
  }
  return false;
}
