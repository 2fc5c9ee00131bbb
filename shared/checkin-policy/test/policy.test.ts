import { describe, expect, it } from 'vitest';
import {
  admission,
  eventVerdict,
  faceDecision,
  geofenceStatus,
  PASSIVE_LIVE_LINE,
  passiveLiveness,
  REENTRY_DEFAULT,
  retakeReasons,
  syncFlags,
  type EventRules,
} from '../src/index.js';

const policy = {
  matchThreshold: 0.6,
  stepUpThreshold: 0.4,
  probeQualityMin: 0.4,
  requireLiveness: true,
  livenessThreshold: 0.5,
};
const clear = { qualityFactors: { detector: 1, size: 1, sharpness: 0, exposure: 1, pose: 1 } };
const open: EventRules = { status: 'open', checkinMethods: [], capacity: null };
const first = { admitted: 0, alreadyIn: false };
const again = { admitted: 1, alreadyIn: true };
const eventDenial = (event: EventRules, method: string, subject: typeof first) =>
  eventVerdict(event, method, subject).denial;

describe('checkin policy', () => {
  it('accepts at or above the accept line, steps up from the refuse line, refuses below it', () => {
    expect(faceDecision(policy, clear, { score: 0.6 }, 0.9)).toBe('accept');
    expect(faceDecision(policy, clear, { score: 0.5999 }, 0.9)).toBe('step_up');
    expect(faceDecision(policy, clear, { score: 0.4 }, 0.9)).toBe('step_up');
    expect(faceDecision(policy, clear, { score: 0.3999 }, 0.9)).toBe('refuse');
    expect(faceDecision(policy, clear, undefined, 0.9)).toBe('refuse');
  });

  it('never steps up when the refuse line is at the accept line', () => {
    const twoAnswers = { ...policy, stepUpThreshold: 0.6 };
    expect(faceDecision(twoAnswers, clear, { score: 0.59 }, 0.9)).toBe('refuse');
    expect(faceDecision({ ...policy, stepUpThreshold: 0.9 }, clear, { score: 0.59 }, 0.9)).toBe('refuse');
  });

  it('fails liveness before matching when the tenant requires it', () => {
    expect(faceDecision(policy, clear, { score: 0.9 }, 0.2)).toBe('liveness_failed');
    expect(faceDecision({ ...policy, requireLiveness: false }, clear, { score: 0.9 }, null)).toBe('accept');
  });

  describe('passive liveness first', () => {
    const uncertain = { ...policy, livenessChallenge: 'when_uncertain' as const };
    const look = (...scores: number[]) => scores.map((score, i) => ({ score, picture: `frame-${i}` }));

    it('passes clearly live frames without the challenge, and fails clear spoofs without it', () => {
      expect(passiveLiveness(uncertain, look(0.97, PASSIVE_LIVE_LINE))).toBe('live');
      expect(passiveLiveness(uncertain, look(0.1, 0.49))).toBe('spoof');
    });

    it('asks for the challenge when any frame is uncertain, or one frame is all it has', () => {
      expect(passiveLiveness(uncertain, look(0.97, 0.89))).toBe('challenge');
      expect(passiveLiveness(uncertain, look(0.2, 0.95))).toBe('challenge');
      expect(passiveLiveness(uncertain, look(0.99))).toBe('challenge');
    });

    it('asks for the challenge when the frames are one still picture, however live it scores', () => {
      const still = [0.99, 0.99].map((score) => ({ score, picture: 'the same bytes' }));
      expect(passiveLiveness(uncertain, still)).toBe('challenge');
    });

    it('always asks under the setting `always`, and never judges without liveness required', () => {
      expect(passiveLiveness({ ...uncertain, livenessChallenge: 'always' }, look(0.99, 0.98))).toBe(
        'challenge',
      );
      expect(passiveLiveness({ ...uncertain, requireLiveness: false }, look(0.1, 0.1))).toBe('challenge');
    });
  });

  it('asks for a retake of a small, dark or turned face before judging it, and says what to fix', () => {
    const far = { qualityFactors: { ...clear.qualityFactors, size: 0.3, pose: 0.35 } };
    expect(faceDecision(policy, far, { score: 0.95 }, 0.9)).toBe('retake');
    expect(retakeReasons(far, policy.probeQualityMin)).toEqual(['move_closer', 'face_the_camera']);
    const dark = { qualityFactors: { ...clear.qualityFactors, exposure: 0.1 } };
    expect(retakeReasons(dark, policy.probeQualityMin)).toEqual(['more_light']);
    // A soft face is judged: sharpness does not predict failure on real-world photos.
    expect(faceDecision(policy, clear, { score: 0.95 }, 0.9)).toBe('accept');
  });

  it('denies a closed event, a method it does not take, and a new subject when full', () => {
    expect(eventDenial({ ...open, status: 'cancelled' }, 'qr', { admitted: 0, alreadyIn: false })).toBe(
      'event_closed',
    );
    expect(
      eventDenial({ ...open, checkinMethods: ['qr'] }, 'facial', { admitted: 0, alreadyIn: false }),
    ).toBe('method_not_allowed');
    expect(eventDenial({ ...open, capacity: 2 }, 'qr', { admitted: 2, alreadyIn: false })).toBe(
      'capacity_reached',
    );
    expect(eventDenial({ ...open, capacity: 2 }, 'qr', { admitted: 2, alreadyIn: true })).toBeNull();
  });

  it('admits outside the geofence with an alert', () => {
    const event = { lat: 38.7223, lng: -9.1393, radiusM: 100 };
    expect(geofenceStatus(event, { lat: 38.7223, lng: -9.1393 }, 200)).toBe('ok');
    expect(geofenceStatus(event, { lat: 38.73, lng: -9.1393 }, 200)).toBe('outside');
    expect(geofenceStatus(event, undefined, 200)).toBe('unknown');
    expect(admission(null, 'outside')).toEqual({ outcome: 'geofence_alert', reason: null });
    expect(admission('event_closed', 'ok')).toEqual({ outcome: 'denied', reason: 'event_closed' });
  });

  it('flags a device admission the cloud would have refused, never a device refusal', () => {
    const admitted = { outcome: 'success' as const, reason: null };
    expect(
      syncFlags(admitted, eventVerdict({ ...open, capacity: 1 }, 'qr', { admitted: 1, alreadyIn: false })),
    ).toEqual(['capacity_reached']);
    expect(
      syncFlags(
        { outcome: 'denied', reason: 'not_recognised' },
        eventVerdict({ ...open, status: 'closed' }, 'qr', first),
      ),
    ).toEqual([]);
  });

  describe('re-entry', () => {
    it('allows a returning subject by default, without a flag, and without a second place', () => {
      expect(REENTRY_DEFAULT).toBe('allow');
      expect(eventVerdict(open, 'facial', again)).toEqual({ denial: null, flags: [] });
      expect(eventVerdict({ ...open, capacity: 1 }, 'qr', again)).toEqual({ denial: null, flags: [] });
      expect(eventVerdict({ ...open, capacity: 1, reentry: 'allow' }, 'manual', again)).toEqual({
        denial: null,
        flags: [],
      });
    });

    it('refuses a returning subject with already_checked_in under refuse, whatever the door method', () => {
      for (const method of ['facial', 'qr', 'manual']) {
        expect(eventDenial({ ...open, reentry: 'refuse' }, method, again)).toBe('already_checked_in');
        expect(eventDenial({ ...open, reentry: 'refuse' }, method, first)).toBeNull();
      }
    });

    it('admits a returning subject with the flag already_checked_in under flag', () => {
      expect(eventVerdict({ ...open, reentry: 'flag', capacity: 1 }, 'qr', again)).toEqual({
        denial: null,
        flags: ['already_checked_in'],
      });
      expect(eventVerdict({ ...open, reentry: 'flag' }, 'qr', first)).toEqual({ denial: null, flags: [] });
    });

    it('checks a guest in once by invitation link, whatever the event allows', () => {
      for (const reentry of ['allow', 'flag', 'refuse'] as const) {
        expect(eventDenial({ ...open, reentry }, 'link', again)).toBe('already_checked_in');
        expect(eventDenial({ ...open, reentry }, 'link', first)).toBeNull();
      }
    });

    it('says a closed event first, then re-entry, then the method', () => {
      const strict = { ...open, reentry: 'refuse' as const, checkinMethods: ['qr'] };
      expect(eventDenial({ ...strict, status: 'closed' }, 'facial', again)).toBe('event_closed');
      expect(eventDenial(strict, 'facial', again)).toBe('already_checked_in');
      expect(eventDenial(strict, 'facial', first)).toBe('method_not_allowed');
    });

    it('flags a synced re-entry only as a real disagreement: under refuse or flag, never under allow', () => {
      const admitted = { outcome: 'success' as const, reason: null };
      const flagsUnder = (reentry: 'allow' | 'flag' | 'refuse') =>
        syncFlags(admitted, eventVerdict({ ...open, reentry }, 'qr', again));
      expect(flagsUnder('allow')).toEqual([]);
      expect(flagsUnder('refuse')).toEqual(['already_checked_in']);
      expect(flagsUnder('flag')).toEqual(['already_checked_in']);
      expect(syncFlags(admitted, eventVerdict({ ...open, reentry: 'refuse' }, 'qr', first))).toEqual([]);
      expect(
        syncFlags(admitted, eventVerdict({ ...open, reentry: 'flag', status: 'closed' }, 'qr', again)),
      ).toEqual(['event_closed', 'already_checked_in']);
      const refusedHere = { outcome: 'denied' as const, reason: 'already_checked_in' as const };
      expect(syncFlags(refusedHere, eventVerdict({ ...open, reentry: 'refuse' }, 'qr', again))).toEqual([]);
    });
  });
});
