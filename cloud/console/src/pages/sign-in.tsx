// Sign-in: e-mail and password, then the TOTP code when the account has MFA on.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { t } from '../i18n.js';
import { signIn, verifyMfa, type Session } from '../session.js';
import { useAction } from '../hooks.js';
import { ErrorNote } from '../components/feedback.js';
import { CodeInput, Field } from '../components/form.js';

export function SignIn(props: { onSignedIn: (s: Session) => void; languageSwitch: ComponentChildren }) {
  const [ticket, setTicket] = useState<string | null>(null);
  const { error, busy, run } = useAction();
  // The field to type in next has the focus: the e-mail, then the code.
  useEffect(() => document.getElementById(ticket ? 'mfa-code' : 'email')?.focus(), [ticket]);

  const submitPassword = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    void run(async () => {
      const step = await signIn(String(form.get('email')), String(form.get('password')));
      if (step.kind === 'mfa') setTicket(step.ticket);
      else props.onSignedIn(step.session);
    });
  };
  const submitCode = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    void run(async () => props.onSignedIn(await verifyMfa(ticket!, String(form.get('code')).trim())));
  };

  return (
    <main class="signin">
      <article>
        <h1>{ticket ? t('mfaTitle') : t('signInTitle')}</h1>
        {ticket ? (
          <form key="mfa" onSubmit={submitCode}>
            <p>{t('mfaHelp')}</p>
            <Field label={t('code')}>
              <CodeInput id="mfa-code" autoFocus />
            </Field>
            <ErrorNote error={error} />
            <button type="submit" aria-busy={busy}>
              {t('verify')}
            </button>
          </form>
        ) : (
          <form key="password" onSubmit={submitPassword}>
            <Field label={t('email')}>
              <input name="email" id="email" type="email" autocomplete="username" required autoFocus />
            </Field>
            <Field label={t('password')}>
              <input name="password" id="password" type="password" autocomplete="current-password" required />
            </Field>
            <ErrorNote error={error} />
            <button type="submit" aria-busy={busy}>
              {t('signIn')}
            </button>
          </form>
        )}
        {props.languageSwitch}
      </article>
    </main>
  );
}
