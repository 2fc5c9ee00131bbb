import { describe, expect, it } from 'vitest';
import { admission, eventDenial, faceVerdict, geofenceStatus, syncFlags } from '../src/index.js';

const policy = { matchThreshold: 0.57, requireLiveness: true, livenessThreshold: 0.5 };
const open = { status: 'open', checkinMethods: [], capacity: null };

describe('checkin policy', () => {
  it('fails liveness before matching when the tenant requires it', () => {
    expect(faceVerdict(policy, { score: 0.9 }, 0.2)).toBe('liveness_failed');
    expect(faceVerdict({ ...policy, requireLiveness: false }, { score: 0.9 }, null)).toBe('recognised');
  });

  it('recognises at or above the threshold only', () => {
    expect(faceVerdict(policy, { score: 0.57 }, 0.9)).toBe('recognised');
    expect(faceVerdict(policy, { score: 0.5699 }, 0.9)).toBe('not_recognised');
    expect(faceVerdict(policy, undefined, 0.9)).toBe('not_recognised');
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
