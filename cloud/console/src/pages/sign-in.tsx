// Sign-in: e-mail and password, then the TOTP code when the account has MFA on (or, for a lost
// authenticator, a recovery code). "Forgot your password?" (`#/forgot-password`) asks for a reset link;
// the mailed link opens `#/reset-password?token=…`, where the new password is chosen.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { lang, t } from '../i18n.js';
import { forgotPassword, resetPassword, signIn, verifyMfa, type Session } from '../session.js';
import { useAction } from '../hooks.js';
import { ErrorNote, Notice } from '../components/feedback.js';
import { CodeInput, Field, formFields } from '../components/form.js';

type Step = { kind: 'password' } | { kind: 'mfa' | 'recovery'; ticket: string };

/** The page the address names while signed out: `forgot-password`, `reset-password` or the sign-in. */
function routeOf(hash: string): { page: 'sign-in' | 'forgot' | 'reset'; token: string | null } {
  const [path, query] = hash.replace(/^#\/?/, '').split('?');
  if (path === 'forgot-password') return { page: 'forgot', token: null };
  if (path === 'reset-password') return { page: 'reset', token: new URLSearchParams(query).get('token') };
  return { page: 'sign-in', token: null };
}

function Forgot() {
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { error, busy, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const { email } = formFields(e, ['email']);
    void run(async () => {
      await forgotPassword(email, lang());
      setSentTo(email);
    });
  };
  return (
    <>
      <h1>{t('forgotTitle')}</h1>
      {sentTo ? (
        <Notice message={t('forgotSent', { email: sentTo })} />
      ) : (
        <form onSubmit={submit} id="forgot-form">
          <p>{t('forgotHelp')}</p>
          <Field label={t('email')}>
            <input name="email" id="forgot-email" type="email" autocomplete="username" required autoFocus />
          </Field>
          <ErrorNote error={error} />
          <button type="submit" aria-busy={busy}>
            {t('forgotSend')}
          </button>
        </form>
      )}
      <p>
        <a href="#/" id="back-to-sign-in">
          {t('backToSignIn')}
        </a>
      </p>
    </>
  );
}

function Reset({ token }: { token: string | null }) {
  const [done, setDone] = useState(false);
  const { error, busy, run, setError } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const { password, again } = formFields(e, ['password', 'again']);
    if (password !== again) {
      setError({ message: t('passwordsDiffer') });
      return;
    }
    void run(async () => {
      await resetPassword(token ?? '', password);
      setDone(true);
    });
  };
  return (
    <>
      <h1>{t('resetTitle')}</h1>
      {done ? (
        <Notice message={t('resetDone')} />
      ) : (
        // Typing again clears a refusal that no longer applies (e.g. the two passwords now agree).
        <form onSubmit={submit} onInput={() => error && setError(null)} id="reset-form">
          <Field label={t('newPassword')} help={t('newPasswordHelp')}>
            <input
              name="password"
              id="new-password"
              type="password"
              autocomplete="new-password"
              minLength={12}
              maxLength={256}
              required
              autoFocus
            />
          </Field>
          <Field label={t('repeatPassword')}>
            <input
              name="again"
              id="new-password-again"
              type="password"
              autocomplete="new-password"
              minLength={12}
              maxLength={256}
              required
            />
          </Field>
          <ErrorNote error={error} />
          <button type="submit" aria-busy={busy}>
            {t('resetSave')}
          </button>
        </form>
      )}
      <p>
        <a href="#/" id="back-to-sign-in">
          {t('backToSignIn')}
        </a>
      </p>
    </>
  );
}

function SignInSteps({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [step, setStep] = useState<Step>({ kind: 'password' });
  const { error, busy, run, setError } = useAction();
  // The field to type in next has the focus: the e-mail, then the code.
  const focus = { password: 'email', mfa: 'mfa-code', recovery: 'recovery-code' }[step.kind];
  useEffect(() => document.getElementById(focus)?.focus(), [focus]);

  const submitPassword = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    void run(async () => {
      const next = await signIn(String(form.get('email')), String(form.get('password')), lang());
      if (next.kind === 'mfa') setStep({ kind: 'mfa', ticket: next.ticket });
      else onSignedIn(next.session);
    });
  };
  const submitCode = (e: Event) => {
    e.preventDefault();
    if (step.kind === 'password') return;
    const { code } = formFields(e, ['code']);
    const proof = step.kind === 'mfa' ? { code } : { recoveryCode: code };
    void run(async () => onSignedIn(await verifyMfa(step.ticket, proof)));
  };
  const switchTo = (kind: 'mfa' | 'recovery') => {
    if (step.kind === 'password') return;
    setError(null);
    setStep({ kind, ticket: step.ticket });
  };

  if (step.kind === 'password') {
    return (
      <>
        <h1>{t('signInTitle')}</h1>
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
        <p>
          <a href="#/forgot-password" id="forgot-password">
            {t('forgotPassword')}
          </a>
        </p>
      </>
    );
  }
  const recovery = step.kind === 'recovery';
  return (
    <>
      <h1>{recovery ? t('recoveryTitle') : t('mfaTitle')}</h1>
      <form key={step.kind} onSubmit={submitCode}>
        <p>{recovery ? t('recoveryHelp') : t('mfaHelp')}</p>
        {recovery ? (
          <Field label={t('recoveryCode')}>
            <input
              name="code"
              id="recovery-code"
              autocomplete="off"
              autocapitalize="none"
              spellcheck={false}
              pattern="\s*[A-Za-z2-9]{4}-?[A-Za-z2-9]{4}-?[A-Za-z2-9]{4}-?[A-Za-z2-9]{4}\s*"
              placeholder="xxxx-xxxx-xxxx-xxxx"
              required
            />
          </Field>
        ) : (
          <Field label={t('code')}>
            <CodeInput id="mfa-code" autoFocus />
          </Field>
        )}
        <ErrorNote error={error} />
        <button type="submit" aria-busy={busy}>
          {t('verify')}
        </button>
      </form>
      <p>
        <button
          type="button"
          class="link"
          id={recovery ? 'use-authenticator' : 'use-recovery-code'}
          onClick={() => switchTo(recovery ? 'mfa' : 'recovery')}
        >
          {recovery ? t('useAuthenticator') : t('useRecoveryCode')}
        </button>
      </p>
    </>
  );
}

export function SignIn(props: { onSignedIn: (s: Session) => void; languageSwitch: ComponentChildren }) {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onHash = () => setHash(location.hash);
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const route = routeOf(hash);
  return (
    <main class="signin">
      <article>
        {route.page === 'forgot' ? <Forgot key="forgot" /> : null}
        {route.page === 'reset' ? <Reset key={route.token ?? ''} token={route.token} /> : null}
        {route.page === 'sign-in' ? <SignInSteps onSignedIn={props.onSignedIn} /> : null}
        {props.languageSwitch}
      </article>
    </main>
  );
}
