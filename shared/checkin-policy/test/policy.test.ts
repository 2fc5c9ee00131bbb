import { describe, expect, it } from 'vitest';
import {
  admission,
  eventDenial,
  faceDecision,
  geofenceStatus,
  retakeReasons,
  syncFlags,
} from '../src/index.js';

const policy = {
  matchThreshold: 0.6,
  stepUpThreshold: 0.4,
  probeQualityMin: 0.4,
  requireLiveness: true,
  livenessThreshold: 0.5,
};
const clear = { qualityFactors: { detector: 1, size: 1, sharpness: 0, exposure: 1, pose: 1 } };
const open = { status: 'open', checkinMethods: [], capacity: null };

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
    expect(syncFlags(admitted, 'capacity_reached', true)).toEqual(['capacity_reached', 'already_checked_in']);
    expect(syncFlags({ outcome: 'denied', reason: 'not_recognised' }, 'event_closed', true)).toEqual([]);
  });
});
