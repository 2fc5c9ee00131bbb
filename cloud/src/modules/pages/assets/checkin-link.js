// The landing of an invitation's check-in link (`/c/{linkToken}`): opening it records nothing (mail
// scanners open links too); it says whose link it is, for which event of which organisation, and the
// guest's tap calls the check-in route as an API client.
import {
  api,
  askedLanguage,
  el,
  header,
  notice,
  pageLanguage,
  problemText,
  render,
  translator,
} from './common.js';

const [, , linkToken] = location.pathname.split('/');
const route = `/v1/public/checkin/link/${encodeURIComponent(linkToken)}`;

async function start() {
  const landing = await api('GET', `${route}/landing${askedLanguage()}`);
  const lang = pageLanguage(landing.data?.locale);
  const t = translator(lang);
  if (!landing.ok) {
    return render(
      header(t, lang, t('checkinTitle')),
      notice(
        'error',
        landing.status === 0 || landing.status === 429 ? problemText(t, landing) : t('checkinInvalid'),
      ),
    );
  }
  const { organisation, guest, event } = landing.data;
  // The event's colours, as on its invitation page.
  if (event.colors.primary) document.documentElement.style.setProperty('--brand', event.colors.primary);
  if (event.colors.text) document.documentElement.style.setProperty('--brand-text', event.colors.text);
  const status = el('div', { id: 'status' });
  const button = el(
    'button',
    {
      id: 'checkin',
      onclick: async () => {
        button.disabled = true;
        const done = await api('GET', route);
        button.disabled = false;
        if (done.ok) {
          const vars = { name: done.data.guest.displayName, event: done.data.event.name };
          const { result, reason } = done.data;
          if (result !== 'denied') button.hidden = true;
          return status.replaceChildren(
            result === 'checked_in'
              ? notice('ok', t('checkinDone', vars))
              : result === 'already_checked_in'
                ? notice('ok', t('checkinAlready', vars))
                : notice('error', t('checkinDenied', { reason: t(`reason_${reason}`) })),
          );
        }
        const code = done.data?.code;
        status.replaceChildren(
          notice(
            'error',
            code === 'event_not_open'
              ? t('checkinNotOpen')
              : code === 'not_found'
                ? t('checkinInvalid')
                : problemText(t, done),
          ),
        );
      },
    },
    t('checkinButton'),
  );
  render(
    header(t, lang, t('checkinTitle')),
    el(
      'section',
      { class: 'hero' },
      el('p', { id: 'organiser', class: 'organiser' }, organisation.name),
      el('h1', {}, event.name),
    ),
    el(
      'section',
      { class: 'card' },
      el('p', {}, t('checkinFor', { name: guest.displayName, event: event.name })),
      event.when ? el('p', { id: 'when' }, t('when', { date: event.when })) : null,
      event.venue ? el('p', { id: 'where' }, t('where', { place: event.venue })) : null,
      el('p', {}, t('checkinIntro')),
      button,
      status,
    ),
  );
}

start();
