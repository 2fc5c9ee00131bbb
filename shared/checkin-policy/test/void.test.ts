import { describe, expect, it } from 'vitest';
import { countsAsAdmission, voidRefusal } from '../src/index.js';

describe('voiding a check-in', () => {
  it('leaves a voided admission counting for nothing (no place, no earlier admission)', () => {
    expect(countsAsAdmission({ outcome: 'success', voided: false })).toBe(true);
    expect(countsAsAdmission({ outcome: 'geofence_alert', voided: false })).toBe(true);
    expect(countsAsAdmission({ outcome: 'success', voided: true })).toBe(false);
    expect(countsAsAdmission({ outcome: 'denied', voided: false })).toBe(false);
  });

  it('voids an admission once, and nothing else', () => {
    expect(voidRefusal({ outcome: 'success', voided: false })).toBeNull();
    expect(voidRefusal({ outcome: 'geofence_alert', voided: false })).toBeNull();
    expect(voidRefusal({ outcome: 'success', voided: true })).toBe('already_voided');
    expect(voidRefusal({ outcome: 'denied', voided: false })).toBe('checkin_not_admitted');
    expect(voidRefusal({ outcome: 'liveness_failed', voided: false })).toBe('checkin_not_admitted');
  });
});
