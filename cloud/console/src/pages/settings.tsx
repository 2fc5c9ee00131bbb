// Settings: the recognition lines and floors with what each one means, the second factors a face
// between the lines may use, the default geofence radius, the age policy and whether owners and admins
// must use two-step verification; the signed-in admin's own two-step verification (components/two-step).
import { ok, type Schemas } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { t } from '../i18n.js';
import type { TextKey } from '../texts.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { ErrorNote, Notice } from '../components/feedback.js';
import { Field } from '../components/form.js';
import { PageHeader } from '../components/page-header.js';
import { TwoStep } from '../components/two-step.js';

type Factor = Schemas['StepUpFactor'];
const FACTORS = [
  ['qr', 'factorQr'],
  ['staff', 'factorStaff'],
  ['document_last4', 'factorDocumentLast4'],
  ['birth_date', 'factorBirthDate'],
] as const satisfies ReadonlyArray<readonly [Factor, TextKey]>;

export function Settings({ session }: { session: Session }) {
  const tenant = { params: { path: { id: session.me.tenant.id } } };
  const settings = useLoad(async () => ok(await session.api.GET('/v1/tenants/{id}/settings', tenant)), []);
  const [saved, setSaved] = useState(false);
  // Requiring MFA of admins is offered to someone who has it on (the service refuses it otherwise).
  const [ownMfa, setOwnMfa] = useState(session.me.mfaEnabled);
  const action = useAction();
  const s = settings.data;

  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const num = (k: string) => Number(form.get(k));
    const minimumAge = String(form.get('minimumAge') ?? '').trim();
    const body: Schemas['TenantSettingsPatch'] = {
      matchThreshold: num('matchThreshold'),
      stepUpThreshold: num('stepUpThreshold'),
      probeQualityMin: num('probeQualityMin'),
      stepUpFactors: FACTORS.map(([f]) => f).filter((f) => form.get(`factor-${f}`) === 'on'),
      livenessThreshold: num('livenessThreshold'),
      requireLiveness: form.get('requireLiveness') === 'on',
      livenessChallenge: form.get('livenessChallenge') === 'always' ? 'always' : 'when_uncertain',
      defaultLocale: form.get('defaultLocale') === 'pt-BR' ? 'pt-BR' : 'en',
      biometricQualityLevel: num('biometricQualityLevel'),
      geofenceRadiusMetros: num('geofenceRadiusMetros'),
      age_policy: {
        minimumAge: minimumAge === '' ? null : Number(minimumAge),
        belowMinimum:
          form.get('belowMinimum') === 'require_guardian_consent' ? 'require_guardian_consent' : 'deny',
      },
      ...(ownMfa ? { requireMfaForAdmins: form.get('requireMfaForAdmins') === 'on' } : {}),
    };
    setSaved(false);
    void action.run(async () => {
      ok(await session.api.PATCH('/v1/tenants/{id}/settings', { ...tenant, body }));
      setSaved(true);
      settings.reload();
    });
  };
  const unit = (name: keyof Schemas['TenantSettings'], label: string, help: string, value: number) => (
    <Field label={label} help={help}>
      <input
        type="number"
        name={name}
        id={`setting-${name}`}
        min="0"
        max="1"
        step="0.01"
        required
        defaultValue={value}
      />
    </Field>
  );

  return (
    <>
      <PageHeader title={t('navSettings')} />
      <ErrorNote error={settings.error} />
      {s ? (
        <form onSubmit={submit} id="settings">
          <article>
            <h2>{t('thresholds')}</h2>
            <div class="grid-2">
              {unit('matchThreshold', t('matchThreshold'), t('matchHelp'), s.matchThreshold)}
              {unit('stepUpThreshold', t('stepUpThreshold'), t('stepUpHelp'), s.stepUpThreshold)}
              {unit('probeQualityMin', t('probeQualityMin'), t('probeQualityHelp'), s.probeQualityMin)}
              {unit('livenessThreshold', t('livenessThreshold'), t('livenessHelp'), s.livenessThreshold)}
              {unit('biometricQualityLevel', t('qualityLevel'), t('qualityHelp'), s.biometricQualityLevel)}
            </div>
            <label>
              <input
                type="checkbox"
                role="switch"
                name="requireLiveness"
                defaultChecked={s.requireLiveness}
              />
              {t('requireLiveness')}
            </label>
            <Field label={t('livenessChallenge')} help={t('livenessChallengeHelp')}>
              <select name="livenessChallenge" id="setting-livenessChallenge" value={s.livenessChallenge}>
                <option value="when_uncertain">{t('livenessChallengeWhenUncertain')}</option>
                <option value="always">{t('livenessChallengeAlways')}</option>
              </select>
            </Field>
            <fieldset id="setting-stepUpFactors">
              <legend>{t('stepUpFactors')}</legend>
              {FACTORS.map(([factor, label]) => (
                <label key={factor}>
                  <input
                    type="checkbox"
                    name={`factor-${factor}`}
                    defaultChecked={s.stepUpFactors.includes(factor)}
                  />
                  {t(label)}
                </label>
              ))}
              <small>{t('stepUpFactorsHelp')}</small>
            </fieldset>
          </article>
          <article>
            <h2>{t('guestLanguageSection')}</h2>
            <Field label={t('defaultLocale')} help={t('defaultLocaleHelp')}>
              <select name="defaultLocale" id="setting-defaultLocale" value={s.defaultLocale}>
                <option value="en">English</option>
                <option value="pt-BR">Português (BR)</option>
              </select>
            </Field>
          </article>
          <article>
            <h2>{t('geofence')}</h2>
            <Field label={t('geofenceRadius')} help={t('geofenceHelp')}>
              <input
                type="number"
                name="geofenceRadiusMetros"
                min="0"
                max="100000"
                required
                defaultValue={s.geofenceRadiusMetros}
              />
            </Field>
          </article>
          <article>
            <h2>{t('agePolicy')}</h2>
            <div class="grid-2">
              <Field label={t('minimumAge')}>
                <input
                  type="number"
                  name="minimumAge"
                  min="0"
                  max="150"
                  defaultValue={s.age_policy.minimumAge ?? ''}
                />
              </Field>
              <Field label={t('belowMinimum')}>
                <select name="belowMinimum" value={s.age_policy.belowMinimum}>
                  <option value="deny">{t('deny')}</option>
                  <option value="require_guardian_consent">{t('guardian')}</option>
                </select>
              </Field>
            </div>
          </article>
          <article id="security">
            <h2>{t('securitySection')}</h2>
            <label>
              <input
                type="checkbox"
                role="switch"
                name="requireMfaForAdmins"
                id="setting-requireMfaForAdmins"
                defaultChecked={s.requireMfaForAdmins}
                disabled={!ownMfa}
                aria-describedby="require-mfa-help"
              />
              {t('requireMfaForAdmins')}
            </label>
            <small id="require-mfa-help">
              {t('requireMfaHelp')}
              {ownMfa ? '' : ` ${t('requireMfaNeedsOwn')}`}
            </small>
          </article>
          <ErrorNote error={action.error} />
          <Notice message={saved ? t('saved') : null} />
          <button type="submit" id="save-settings" aria-busy={action.busy}>
            {t('save')}
          </button>
        </form>
      ) : null}
      <TwoStep session={session} onMfaChange={setOwnMfa} />
    </>
  );
}
