// The landing of an invitation's check-in link (`/c/{linkToken}`): opening it records nothing (mail
// scanners open links too); the guest's tap calls the check-in route as an API client.
import { api, chooseLanguage, el, header, notice, problemText, render, translator } from './common.js';

const [, , linkToken] = location.pathname.split('/');
const route = `/v1/public/checkin/link/${encodeURIComponent(linkToken)}`;

function start() {
  const lang = chooseLanguage();
  const t = translator(lang);
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
                : notice('error', t('checkinDenied', { reason })),
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
    el('section', { class: 'card' }, el('p', {}, t('checkinIntro')), button, status),
  );
}

start();
