// The person portal: sign-in by e-mailed link, what each organisation holds (its record of the person,
// guest list entries, check-ins), biometrics with withdrawal of consent, data export and the deletion
// request (and its confirmation page).
import {
  api,
  chooseLanguage,
  el,
  formatDate,
  formatScore,
  header,
  notice,
  problemText,
  render,
  translator,
} from './common.js';

const lang = chooseLanguage();
const t = translator(lang);
const TOKEN_KEY = 'portico.portalToken';
const params = new URLSearchParams(location.search);

const errorText = (res) => problemText(t, res);

function signInForm(message) {
  const input = el('input', {
    type: 'email',
    id: 'email',
    name: 'email',
    required: true,
    autocomplete: 'email',
  });
  const status = el('div');
  const form = el(
    'form',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const res = await api('POST', '/v1/portal/auth/magic-link', {
          body: { email: input.value, language: lang },
        });
        status.replaceChildren(
          res.ok
            ? notice('ok', t('linkSent'))
            : notice('error', res.status === 429 ? t('tooMany') : errorText(res)),
        );
      },
    },
    el('label', { for: 'email' }, t('email')),
    input,
    el('p', {}, el('button', { type: 'submit', id: 'send-link' }, t('sendLink'))),
  );
  render(
    header(t, lang, t('portalTitle')),
    el('section', { class: 'card' }, el('p', {}, t('signInIntro')), message ?? null, form, status),
  );
}

async function signInWithLink(token) {
  render(header(t, lang, t('portalTitle')), el('p', { class: 'muted' }, t('signingIn')));
  const res = await api('GET', `/v1/portal/auth/magic-link/verify?token=${encodeURIComponent(token)}`);
  history.replaceState(null, '', '/portal');
  if (!res.ok) return signInForm(notice('error', res.status === 401 ? t('linkInvalid') : errorText(res)));
  sessionStorage.setItem(TOKEN_KEY, res.data.accessToken);
  return dashboard(res.data.accessToken);
}

async function confirmDeletionPage(token) {
  const status = el('div');
  const button = el(
    'button',
    {
      class: 'danger',
      id: 'confirm-delete',
      onclick: async () => {
        button.disabled = true;
        const res = await api('POST', '/v1/portal/auth/deletion-confirm', { body: { token } });
        history.replaceState(null, '', '/portal/delete');
        status.replaceChildren(
          res.ok
            ? notice('ok', t('deleteConfirmed', { date: formatDate(lang, res.data.scheduledFor) }))
            : notice('error', res.status === 401 ? t('tokenInvalid') : errorText(res)),
        );
      },
    },
    t('confirmDeleteButton'),
  );
  render(
    header(t, lang, t('confirmDeleteTitle')),
    el('section', { class: 'card' }, el('p', {}, t('confirmDeleteIntro')), button, status),
  );
}

async function dashboard(token) {
  const call = (method, path, body) => api(method, path, { token, body });
  const [me, bio, orgs, deletion] = await Promise.all([
    call('GET', '/v1/me'),
    call('GET', '/v1/me/biometrics'),
    call('GET', '/v1/me/organisations'),
    call('GET', '/v1/me/deletion-request'),
  ]);
  if (me.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    return signInForm();
  }
  if (!me.ok) return render(header(t, lang, t('portalTitle')), notice('error', errorText(me)));

  const profile = el(
    'section',
    { class: 'card', id: 'profile' },
    el('h2', {}, t('profile')),
    el(
      'p',
      {},
      el('strong', {}, me.data.name ?? me.data.email),
      me.data.name ? el('span', { class: 'muted' }, ` · ${me.data.email}`) : null,
    ),
  );

  const organisations = el(
    'section',
    { class: 'card', id: 'organisations' },
    el('h2', {}, t('heldBy')),
    orgs.ok && orgs.data.items.length
      ? orgs.data.items.map(organisationView)
      : el('p', { class: 'muted' }, orgs.ok ? t('noneHeld') : errorText(orgs)),
  );

  const bioStatus = el('div');
  const biometrics = el(
    'section',
    { class: 'card', id: 'biometrics' },
    el('h2', {}, t('biometrics')),
    bio.data?.items?.length ? null : el('p', { class: 'muted' }, t('noBiometrics')),
    el(
      'ul',
      { class: 'plain' },
      (bio.data?.items ?? []).map((b) =>
        el(
          'li',
          { class: 'tenant' },
          el(
            'div',
            {},
            el('strong', {}, b.tenantName),
            el('br'),
            el(
              'span',
              { class: 'muted' },
              b.enrolled
                ? t('enrolled', {
                    date: formatDate(lang, b.enrolledAt),
                    quality: formatScore(lang, b.quality),
                  })
                : t('notEnrolled'),
            ),
          ),
          b.enrolled || b.images > 0
            ? el(
                'button',
                {
                  class: 'danger',
                  'data-tenant': b.tenantId,
                  onclick: async () => {
                    if (!confirm(t('revokeConfirm', { tenant: b.tenantName }))) return;
                    const res = await call('DELETE', `/v1/me/biometrics/${encodeURIComponent(b.tenantId)}`);
                    if (!res.ok) return bioStatus.replaceChildren(notice('error', errorText(res)));
                    await dashboard(token);
                    document.getElementById('bio-status')?.replaceChildren(
                      notice(
                        'ok',
                        t('revoked', {
                          tenant: b.tenantName,
                          templates: res.data.templatesErased,
                          images: res.data.imagesErased,
                        }),
                      ),
                    );
                  },
                },
                t('revoke'),
              )
            : null,
        ),
      ),
    ),
    el('div', { id: 'bio-status' }, bioStatus),
  );

  const exportStatus = el('div');
  const includeImages = el('input', { type: 'checkbox', id: 'include-images' });
  const deletionStatus = el('div');
  const open = deletion.ok && ['pending_confirmation', 'confirmed'].includes(deletion.data.status);
  const rights = el(
    'section',
    { class: 'card', id: 'rights' },
    el('h2', {}, t('privacy')),
    el('p', {}, t('exportIntro')),
    // Nobody holds images of a guest-only address: no box that would change nothing.
    bio.data?.items?.length ? el('label', { class: 'check' }, includeImages, t('includeImages')) : null,
    el(
      'button',
      {
        class: 'secondary',
        id: 'export',
        onclick: async () => {
          const res = await call('POST', '/v1/me/data-export', { includeImages: includeImages.checked });
          exportStatus.replaceChildren(
            res.ok
              ? notice('ok', t('exportStarted'))
              : notice('error', res.status === 409 ? t('exportBusy') : errorText(res)),
          );
        },
      },
      t('exportButton'),
    ),
    exportStatus,
    el('hr'),
    el('p', {}, t('deleteIntro')),
    deletion.ok
      ? el(
          'p',
          { class: 'muted', id: 'deletion-status' },
          t('deleteStatus', { status: t(`status_${deletion.data.status}`) }),
          deletion.data.status === 'confirmed'
            ? ` ${t('deleteScheduled', { date: formatDate(lang, deletion.data.scheduledFor) })}`
            : '',
        )
      : null,
    open
      ? el(
          'button',
          {
            class: 'secondary',
            id: 'cancel-delete',
            onclick: async () => {
              const res = await call('DELETE', '/v1/me/deletion-request');
              if (res.ok) return dashboard(token);
              deletionStatus.replaceChildren(notice('error', errorText(res)));
            },
          },
          t('cancelDelete'),
        )
      : el(
          'button',
          {
            class: 'danger',
            id: 'request-delete',
            onclick: async () => {
              if (!confirm(t('deleteConfirm'))) return;
              const res = await call('POST', '/v1/me/deletion-request');
              if (!res.ok) return deletionStatus.replaceChildren(notice('error', errorText(res)));
              await dashboard(token);
              document.getElementById('deletion-note')?.replaceChildren(notice('ok', t('deleteRequested')));
            },
          },
          t('deleteButton'),
        ),
    el('div', { id: 'deletion-note' }, deletionStatus),
  );

  const signOut = el(
    'button',
    {
      class: 'secondary',
      id: 'sign-out',
      onclick: async () => {
        const sessions = await call('GET', '/v1/me/sessions');
        const current = sessions.data?.items?.find((s) => s.current);
        if (current) await call('DELETE', `/v1/me/sessions/${current.id}`);
        sessionStorage.removeItem(TOKEN_KEY);
        signInForm();
      },
    },
    t('signOut'),
  );

  render(header(t, lang, t('portalTitle')), profile, organisations, biometrics, rights, el('p', {}, signOut));
}

/** When an event is held, in its own time zone: start, and end when it has one. */
function eventDates(g) {
  if (!g.eventStartsAt) return t('orgNoDate');
  const start = formatDate(lang, g.eventStartsAt, g.eventTimeZone);
  if (!g.eventEndsAt) return start;
  // An event that ends the day it starts: the end's time alone.
  const day = (iso) => new Date(iso).toLocaleDateString('en-CA', { timeZone: g.eventTimeZone });
  const end =
    day(g.eventStartsAt) === day(g.eventEndsAt)
      ? new Intl.DateTimeFormat(lang, { timeStyle: 'short', timeZone: g.eventTimeZone }).format(
          new Date(g.eventEndsAt),
        )
      : formatDate(lang, g.eventEndsAt, g.eventTimeZone);
  return `${start} – ${end}`;
}

/** One organisation: its record of the person (or none), its guest list entries, its check-ins. */
function organisationView(o) {
  return el(
    'article',
    { class: 'org', 'data-tenant': o.tenantId },
    el('h3', {}, o.tenantName),
    el('p', { class: 'muted' }, o.person ? t('orgPerson', { name: o.person.name }) : t('orgGuestOnly')),
    o.guests.length
      ? [
          el('h4', {}, t('orgGuests')),
          el(
            'ul',
            { class: 'plain guests' },
            o.guests.map((g) =>
              el(
                'li',
                {},
                t('orgGuestLine', { event: g.eventName, date: eventDates(g) }),
                el('br'),
                el('span', { class: 'muted' }, t(`guest_${g.status}`)),
              ),
            ),
          ),
        ]
      : null,
    el('h4', {}, t('checkins')),
    o.checkins.length
      ? el(
          'ul',
          { class: 'plain checkins' },
          o.checkins.map((c) =>
            el(
              'li',
              {},
              t('orgCheckinLine', {
                date: formatDate(lang, c.occurredAt),
                event: c.eventName ? ` · ${c.eventName}` : '',
                method: t(`method_${c.method}`),
                outcome: t(`outcome_${c.outcome}`),
              }),
            ),
          ),
        )
      : el('p', { class: 'muted' }, t('noCheckins')),
    o.checkinsTotal > o.checkins.length
      ? el(
          'p',
          { class: 'muted' },
          t('orgCheckinsMore', { shown: o.checkins.length, total: o.checkinsTotal }),
        )
      : null,
  );
}

const token = params.get('token');
if (location.pathname === '/portal/login' && token) signInWithLink(token);
else if (location.pathname === '/portal/delete' && token) confirmDeletionPage(token);
else {
  const kept = sessionStorage.getItem(TOKEN_KEY);
  if (kept) dashboard(kept);
  else signInForm();
}
