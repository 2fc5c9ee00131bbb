// A guest's invitation (`/e/{eventToken}/g/{guestToken}`): the event's branding, and confirming or declining.
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

const [, , eventToken, , guestToken] = location.pathname.split('/');
const base = `/v1/events/${encodeURIComponent(eventToken)}/guests/${encodeURIComponent(guestToken)}`;

async function start() {
  const res = await api('GET', base);
  const lang = chooseLanguage(res.data?.event?.branding?.locale);
  const t = translator(lang);
  if (!res.ok)
    return render(
      header(t, lang, t('invitationTitle')),
      notice('error', res.status === 0 || res.status === 429 ? problemText(t, res) : t('invitationInvalid')),
    );
  const guest = res.data;
  const event = guest.event;
  const brand = event.branding ?? {};
  if (brand.primaryColor) document.documentElement.style.setProperty('--brand', brand.primaryColor);
  if (brand.secondaryColor) document.documentElement.style.setProperty('--brand-text', brand.secondaryColor);
  const status = el('div', { id: 'status' });
  const show = (s) => {
    const text = { confirmed: 'confirmed', checked_in: 'checkedIn', declined: 'declined' }[s];
    status.replaceChildren(text ? notice('ok', t(text)) : '');
    confirmButton.hidden = s === 'confirmed' || s === 'checked_in';
    declineButton.hidden = s === 'declined' || s === 'checked_in';
  };
  /** A button that answers the invitation (`confirm` or `decline`). */
  const answer = (action) => {
    const button = el(
      'button',
      {
        id: action,
        ...(action === 'decline' ? { class: 'secondary' } : {}),
        onclick: async () => {
          button.disabled = true;
          const done = await api('PATCH', `${base}/${action}`);
          button.disabled = false;
          if (done.ok) return show(done.data.status);
          const code = done.data?.code;
          status.replaceChildren(
            notice(
              'error',
              code === 'event_not_open'
                ? t('eventClosed')
                : code === 'event_full'
                  ? t('eventFull')
                  : problemText(t, done),
            ),
          );
        },
      },
      t(action),
    );
    return button;
  };
  const confirmButton = answer('confirm');
  const declineButton = answer('decline');
  const place = event.venue ? [event.venue.name, event.venue.address].filter(Boolean).join(', ') : '';
  render(
    header(t, lang, t('invitationTitle')),
    el(
      'section',
      { class: 'hero' },
      brand.logoUrl ? el('img', { src: brand.logoUrl, alt: '' }) : null,
      el('h1', {}, brand.displayName ?? event.name),
      brand.welcomeText ? el('p', {}, brand.welcomeText) : null,
    ),
    el(
      'section',
      { class: 'card' },
      el('h2', {}, t('hello', { name: guest.displayName })),
      event.startsAt
        ? el('p', {}, t('when', { date: formatDate(lang, event.startsAt, event.timeZone) }))
        : null,
      place ? el('p', {}, t('where', { place })) : null,
      el('div', { class: 'row' }, confirmButton, declineButton),
      status,
    ),
  );
  show(guest.status);
}

start();
