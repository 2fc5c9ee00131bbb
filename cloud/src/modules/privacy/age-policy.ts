// The tenant's `age_policy` (LGPD art. 14, GDPR art. 8): who may be registered, and whose face may be
// enrolled, by age. Pure rules; the persons and onboarding services apply them.
import type { AgePolicy, GuardianConsent } from '@portico/contract';
import { AppError } from '../../http/errors.js';

/** Whole years between a birth date and `on`, by the UTC calendar (a birthday counts from its day). */
export function ageInYears(birthDate: Date, on: Date): number {
  const years = on.getUTCFullYear() - birthDate.getUTCFullYear();
  const beforeBirthday =
    on.getUTCMonth() < birthDate.getUTCMonth() ||
    (on.getUTCMonth() === birthDate.getUTCMonth() && on.getUTCDate() < birthDate.getUTCDate());
  return beforeBirthday ? years - 1 : years;
}

const isUnder = (policy: AgePolicy, birthDate: Date, now: Date) =>
  policy.minimumAge !== null && ageInYears(birthDate, now) < policy.minimumAge;

const tooYoung = (policy: AgePolicy, what: string) =>
  new AppError(400, 'age_below_minimum', `This tenant does not ${what} persons under ${policy.minimumAge}`, {
    extra: { minimumAge: policy.minimumAge },
  });

/** Registration: refused only under `deny` for a known birth date below the minimum age. */
export function checkRegistrationAge(policy: AgePolicy, birthDate: Date | null | undefined, now: Date): void {
  if (birthDate && policy.belowMinimum === 'deny' && isUnder(policy, birthDate, now)) {
    throw tooYoung(policy, 'register');
  }
}

/**
 * Enrollment of a face: with a minimum age the birth date must be known; under it, `deny` refuses and
 * `require_guardian_consent` needs the guardian's consent. Answers the consent that was relied on.
 */
export function checkEnrollmentAge(
  policy: AgePolicy,
  birthDate: Date | null | undefined,
  now: Date,
  consent: GuardianConsent | undefined,
): GuardianConsent | null {
  if (policy.minimumAge === null) return null;
  if (!birthDate) {
    throw new AppError(
      400,
      'birth_date_required',
      `This tenant enrolls faces only of persons whose age is known (minimum ${policy.minimumAge}): set birthDate first`,
    );
  }
  if (!isUnder(policy, birthDate, now)) return null;
  if (policy.belowMinimum === 'deny') throw tooYoung(policy, 'enroll the faces of');
  if (!consent) {
    throw new AppError(
      400,
      'guardian_consent_required',
      `The person is under ${policy.minimumAge}: enrolling their face needs guardianConsent from a parent or legal guardian`,
      { extra: { minimumAge: policy.minimumAge } },
    );
  }
  return consent;
}
