// The setup a tenant requires: an owner or admin without two-step verification, in a tenant whose
// setting `requireMfaForAdmins` is on, may only turn it on (the service refuses the rest with
// `mfa_setup_required`), so the console shows this instead of its pages until it is on.
import type { ComponentChildren } from 'preact';
import { ok } from '@portico/sdk';
import { t } from '../i18n.js';
import type { Me, Session } from '../session.js';
import { TwoStep } from '../components/two-step.js';

export function MfaSetup(props: {
  session: Session;
  onReady: (me: Me) => void;
  onSignOut: () => void;
  languageSwitch: ComponentChildren;
}) {
  const { session } = props;
  const ready = () =>
    void session.api.GET('/v1/auth/me').then((res) => props.onReady(ok(res)), props.onSignOut);
  return (
    <main class="signin mfa-setup" id="main">
      <h1>{t('mfaRequiredTitle')}</h1>
      <p id="mfa-required-intro">{t('mfaRequiredIntro', { tenant: session.me.tenant.name })}</p>
      <TwoStep session={session} onSetUp={ready} />
      <div class="row">
        {props.languageSwitch}
        <button type="button" class="secondary outline" id="sign-out" onClick={props.onSignOut}>
          {t('signOut')}
        </button>
      </div>
    </main>
  );
}
