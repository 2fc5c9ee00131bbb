// The tenant admin console: sign-in, then one page per area chosen from the sidebar (`#/today`, …).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { initialLang, lang, setLang, t } from './i18n.js';
import type { Lang, TextKey } from './texts.js';
import { inEnvironment, onSessionExpired, resume, type Session } from './session.js';
import { SignIn } from './pages/sign-in.js';
import { MfaSetup } from './pages/mfa-setup.js';
import { Today } from './pages/today.js';
import { Checkins } from './pages/checkins.js';
import { Door } from './pages/door.js';
import { Persons } from './pages/persons.js';
import { Events } from './pages/events.js';
import { Devices } from './pages/devices.js';
import { Integrations } from './pages/integrations.js';
import { Settings } from './pages/settings.js';
import { AuditLog } from './pages/audit.js';
import { Team } from './pages/team.js';
import { AcceptInvite } from './pages/accept-invite.js';

interface PageDef {
  path: string;
  label: TextKey;
  Page: (props: { session: Session }) => preact.JSX.Element;
  /** Shown to owners and admins only: these pages manage the tenant (an operator runs check-in). */
  managers?: true;
}

const PAGES: PageDef[] = [
  { path: 'today', label: 'navToday', Page: Today },
  { path: 'door', label: 'navDoor', Page: Door },
  { path: 'checkins', label: 'navCheckins', Page: Checkins },
  { path: 'persons', label: 'navPersons', Page: Persons },
  { path: 'events', label: 'navEvents', Page: Events },
  { path: 'devices', label: 'navDevices', Page: Devices, managers: true },
  { path: 'team', label: 'navTeam', Page: Team, managers: true },
  { path: 'integrations', label: 'navIntegrations', Page: Integrations, managers: true },
  { path: 'settings', label: 'navSettings', Page: Settings, managers: true },
  { path: 'audit', label: 'navAudit', Page: AuditLog, managers: true },
];

const pathOf = () => location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] || 'today';

function LanguageSwitch({ onChange }: { onChange: (l: Lang) => void }) {
  return (
    <label>
      <small>{t('language')}</small>
      <select
        id="language"
        value={lang()}
        onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value as Lang)}
      >
        <option value="en">English</option>
        <option value="pt-BR">Português (BR)</option>
      </select>
    </label>
  );
}

function App() {
  const [, setLangState] = useState<Lang>(lang());
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [path, setPath] = useState(pathOf());
  // On a phone the menu folds behind a button; choosing a page folds it again.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    const onHash = () => {
      setPath(pathOf());
      setMenuOpen(false);
    };
    addEventListener('hashchange', onHash);
    onSessionExpired(() => setSession(null));
    resume()
      .then(setSession)
      .catch(() => setSession(null));
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const changeLang = (l: Lang) => {
    setLang(l);
    setLangState(l);
  };

  // A team invitation's link (its mail): whoever is signed in here, the invitee's page comes first.
  if (path === 'accept-invite')
    return (
      <AcceptInvite
        onSignedIn={(s) => {
          setSession(s);
          location.hash = '#/today';
        }}
        languageSwitch={<LanguageSwitch onChange={changeLang} />}
      />
    );
  if (session === undefined) return <p aria-busy="true">{t('loading')}</p>;
  if (session === null)
    return <SignIn onSignedIn={setSession} languageSwitch={<LanguageSwitch onChange={changeLang} />} />;

  const pages = session.me.role === 'operator' ? PAGES.filter((p) => !p.managers) : PAGES;
  const current = pages.find((p) => p.path === path) ?? pages[0]!;
  const signOut = async () => {
    await session.portico.logout().catch(() => undefined);
    setSession(null);
    location.hash = '';
  };
  // A tenant that requires MFA of owners and admins holds one without it at the setup.
  if (session.me.mfaSetupRequired) {
    return (
      <MfaSetup
        session={session}
        onReady={(me) => setSession({ ...session, me })}
        onSignOut={() => void signOut()}
        languageSwitch={<LanguageSwitch onChange={changeLang} />}
      />
    );
  }
  return (
    <div class="shell">
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          // The address holds the page (`#/persons`): the link moves focus without changing it.
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        {t('skipToContent')}
      </a>
      <aside>
        <div class="brand">{t('appName')}</div>
        <button
          type="button"
          class="menu-toggle secondary outline"
          aria-expanded={menuOpen}
          aria-controls="console-menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          {t('menu')}
        </button>
        <div id="console-menu" class={menuOpen ? 'menu open' : 'menu'}>
          <div class="who">
            {session.me.tenant.name}
            <br />
            {session.me.email}
          </div>
          <nav aria-label="Console">
            <ul>
              {pages.map((p) => (
                <li key={p.path}>
                  <a href={`#/${p.path}`} aria-current={p === current ? 'page' : undefined}>
                    {t(p.label)}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <LanguageSwitch onChange={changeLang} />
          <label>
            <input
              type="checkbox"
              role="switch"
              id="sandbox"
              checked={session.environment === 'sandbox'}
              onChange={(e) =>
                setSession(
                  inEnvironment(session, (e.currentTarget as HTMLInputElement).checked ? 'sandbox' : 'live'),
                )
              }
            />
            {t('sandbox')}
          </label>
          <button type="button" class="secondary outline" id="sign-out" onClick={() => void signOut()}>
            {t('signOut')}
          </button>
        </div>
      </aside>
      <main id="main" tabIndex={-1} key={`${current.path}-${lang()}-${session.environment}`}>
        {session.environment === 'sandbox' ? (
          <p class="sandbox-banner" role="status">
            {t('sandboxBanner')}
          </p>
        ) : null}
        <current.Page session={session} />
      </main>
    </div>
  );
}

setLang(initialLang());
render(<App />, document.getElementById('app')!);
