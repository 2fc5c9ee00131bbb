// The person portal: sign-in by e-mailed link, my data across organisations, biometrics with
// withdrawal of consent, check-ins, data export and the deletion request (and its confirmation page).
import {
  api,
  chooseLanguage,
  el,
  formatDate,
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
  const [me, bio, checkins, deletion] = await Promise.all([
    call('GET', '/v1/me'),
    call('GET', '/v1/me/biometrics'),
    call('GET', '/v1/me/checkins?limit=20'),
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
    el('h3', { class: 'muted' }, t('heldBy')),
    me.data.tenants.length
      ? el(
          'ul',
          { class: 'plain' },
          me.data.tenants.map((x) => el('li', {}, x.tenantName)),
        )
      : el('p', { class: 'muted' }, t('noneHeld')),
  );

  const bioStatus = el('div');
  const biometrics = el(
    'section',
    { class: 'card', id: 'biometrics' },
    el('h2', {}, t('biometrics')),
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
                ? t('enrolled', { date: formatDate(lang, b.enrolledAt), quality: b.quality?.toFixed(2) })
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

  const checkinList = el(
    'section',
    { class: 'card', id: 'checkins' },
    el('h2', {}, t('checkins')),
    checkins.data?.items?.length
      ? el(
          'ul',
          { class: 'plain' },
          checkins.data.items.map((c) =>
            el(
              'li',
              {},
              t('checkinLine', {
                date: formatDate(lang, c.occurredAt),
                tenant: c.tenantName,
                event: c.eventName ? ` · ${c.eventName}` : '',
                method: t(`method_${c.method}`),
                outcome: t(`outcome_${c.outcome}`),
              }),
            ),
          ),
        )
      : el('p', { class: 'muted' }, t('noCheckins')),
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
    el('label', { class: 'check' }, includeImages, t('includeImages')),
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

  render(header(t, lang, t('portalTitle')), profile, biometrics, checkinList, rights, el('p', {}, signOut));
}

const token = params.get('token');
if (location.pathname === '/portal/login' && token) signInWithLink(token);
else if (location.pathname === '/portal/delete' && token) confirmDeletionPage(token);
else {
  const kept = sessionStorage.getItem(TOKEN_KEY);
  if (kept) dashboard(kept);
  else signInForm();
}
