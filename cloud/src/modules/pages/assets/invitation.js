// A guest's invitation (`/e/{eventToken}/g/{guestToken}`): who invites, the event's branding, date and
// place, confirming or declining, add-to-calendar and the QR ticket. The service picks the language.
import {
  api,
  askedLanguage,
  el,
  header,
  pageLanguage,
  notice,
  problemText,
  render,
  translator,
} from './common.js';

const [, , eventToken, , guestToken] = location.pathname.split('/');
const base = `/v1/events/${encodeURIComponent(eventToken)}/guests/${encodeURIComponent(guestToken)}`;

async function start() {
  const res = await api('GET', base + askedLanguage());
  const lang = pageLanguage(res.data?.locale);
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
      el('p', { id: 'organiser', class: 'organiser' }, t('organiser', { name: guest.organisation.name })),
      el('h1', {}, brand.displayName ?? event.name),
      brand.welcomeText ? el('p', {}, brand.welcomeText) : null,
    ),
    el(
      'section',
      { class: 'card' },
      el('h2', {}, t('hello', { name: guest.displayName })),
      guest.when ? el('p', { id: 'when' }, t('when', { date: guest.when })) : null,
      place ? el('p', { id: 'where' }, t('where', { place })) : null,
      el('div', { class: 'row' }, confirmButton, declineButton),
      status,
      // After the answer, and as a link: it is not a third answer to the invitation. The file is named
      // by the service, after the event.
      guest.calendarUrl
        ? el(
            'a',
            { id: 'add-to-calendar', class: 'calendar', href: guest.calendarUrl, download: true },
            t('addToCalendar'),
          )
        : null,
    ),
    el(
      'section',
      { class: 'card ticket', id: 'ticket' },
      el('h2', {}, t('ticketTitle')),
      el('img', { id: 'ticket-qr', src: guest.ticket.qrCode, alt: t('ticketAlt'), width: 240, height: 240 }),
      el('p', { class: 'muted' }, t('ticketHint')),
    ),
  );
  show(guest.status);
}

start();
