import { describe, expect, it } from 'vitest';
import type { AppError } from '../../src/http/errors.js';
import {
  ageInYears,
  checkEnrollmentAge,
  checkRegistrationAge,
} from '../../src/modules/privacy/age-policy.js';

const now = new Date('2026-11-23T10:00:00.000Z');
const born = (iso: string) => new Date(`${iso}T00:00:00.000Z`);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (e) {
    return (e as AppError).code;
  }
};

describe('age policy', () => {
  it('counts whole years, a birthday from its own day', () => {
    expect(ageInYears(born('2008-11-23'), now)).toBe(18);
    expect(ageInYears(born('2008-11-24'), now)).toBe(17);
    expect(ageInYears(born('2008-12-01'), now)).toBe(17);
  });

  it('without a minimum age nothing is checked', () => {
    const policy = { minimumAge: null, belowMinimum: 'deny' } as const;
    expect(codeOf(() => checkRegistrationAge(policy, born('2020-01-01'), now))).toBeNull();
    expect(checkEnrollmentAge(policy, null, now, undefined)).toBeNull();
  });

  it('deny refuses registering and enrolling a person under the age', () => {
    const policy = { minimumAge: 18, belowMinimum: 'deny' } as const;
    expect(codeOf(() => checkRegistrationAge(policy, born('2008-11-24'), now))).toBe('age_below_minimum');
    expect(codeOf(() => checkRegistrationAge(policy, born('2008-11-23'), now))).toBeNull();
    expect(codeOf(() => checkRegistrationAge(policy, null, now))).toBeNull();
    const consent = { relationship: 'parent', given: true } as const;
    expect(codeOf(() => checkEnrollmentAge(policy, born('2010-01-01'), now, consent))).toBe(
      'age_below_minimum',
    );
  });

  it('enrollment needs the birth date once a minimum age is set', () => {
    const policy = { minimumAge: 16, belowMinimum: 'require_guardian_consent' } as const;
    expect(codeOf(() => checkEnrollmentAge(policy, null, now, undefined))).toBe('birth_date_required');
  });

  it('require_guardian_consent registers a minor but enrolls them only with consent', () => {
    const policy = { minimumAge: 16, belowMinimum: 'require_guardian_consent' } as const;
    const minor = born('2015-05-05');
    expect(codeOf(() => checkRegistrationAge(policy, minor, now))).toBeNull();
    expect(codeOf(() => checkEnrollmentAge(policy, minor, now, undefined))).toBe('guardian_consent_required');
    const consent = { relationship: 'legal_guardian', given: true } as const;
    expect(checkEnrollmentAge(policy, minor, now, consent)).toEqual(consent);
    expect(checkEnrollmentAge(policy, born('2000-01-01'), now, undefined)).toBeNull();
  });
});
