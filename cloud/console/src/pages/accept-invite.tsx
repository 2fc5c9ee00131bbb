// The page a team invitation mail links to (`#/accept-invite?token=inv_…`): whose team and which role,
// then a name and a password; accepting signs the new member in (the cloud sets the refresh cookie,
// read back by `resume`). The token stays in the address's fragment, which no server logs.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { createPortico, ok, type Schemas } from '@portico/sdk';
import { t } from '../i18n.js';
import type { TextKey } from '../texts.js';
import { resume, type Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { ErrorNote } from '../components/feedback.js';
import { Field, formFields } from '../components/form.js';

const ROLE_WORD: Record<Schemas['InvitationPreview']['role'], TextKey> = {
  owner: 'roleOwner',
  admin: 'roleAdmin',
  operator: 'roleOperator',
};

const tokenOf = () => new URLSearchParams(location.hash.split('?')[1] ?? '').get('token') ?? '';

export function AcceptInvite(props: { onSignedIn: (s: Session) => void; languageSwitch: ComponentChildren }) {
  const [token] = useState(tokenOf);
  const api = createPortico({ baseUrl: location.origin }).api;
  const invitation = useLoad(
    async () => ok(await api.POST('/v1/team/invitations/lookup', { body: { token } })),
    [token],
  );
  const action = useAction();
  useEffect(() => {
    if (invitation.data) document.getElementById('accept-name')?.focus();
  }, [invitation.data !== undefined]);

  const submit = (e: Event) => {
    e.preventDefault();
    const { name, password, again } = formFields(e, ['name', 'password', 'again'] as const);
    if (password !== again) {
      action.setError({ message: t('passwordsNotSame') });
      return;
    }
    void action.run(async () => {
      ok(await api.POST('/v1/team/invitations/accept', { body: { token, name, password } }));
      const session = await resume();
      if (session) props.onSignedIn(session);
    });
  };

  const found = invitation.data;
  return (
    <main class="signin">
      <article>
        <h1>{found ? t('acceptTitle', { tenant: found.tenant.name }) : t('appName')}</h1>
        {invitation.loading && !found ? <p aria-busy="true">{t('acceptChecking')}</p> : null}
        <ErrorNote error={invitation.error} />
        {found ? (
          <form onSubmit={submit}>
            <p id="accept-intro">
              {t('acceptIntro', { role: t(ROLE_WORD[found.role]).toLowerCase(), email: found.email })}
            </p>
            {/* The address, for password managers to file the new password under. */}
            <input type="email" name="username" autocomplete="username" value={found.email} hidden readOnly />
            <Field label={t('yourName')}>
              <input name="name" id="accept-name" required maxLength={200} autocomplete="name" />
            </Field>
            <Field label={t('password')} help={t('choosePasswordHelp')}>
              <input
                name="password"
                id="accept-password"
                type="password"
                minLength={12}
                maxLength={256}
                required
                autocomplete="new-password"
              />
            </Field>
            <Field label={t('passwordAgain')}>
              <input
                name="again"
                id="accept-again"
                type="password"
                minLength={12}
                maxLength={256}
                required
                autocomplete="new-password"
              />
            </Field>
            <ErrorNote error={action.error} />
            <button type="submit" id="accept-save" aria-busy={action.busy}>
              {t('acceptSave')}
            </button>
          </form>
        ) : null}
        {props.languageSwitch}
      </article>
    </main>
  );
}
