// The event form: times in the event's own time zone, methods, capacity, geofence, and branding with a
// preview of the kiosk's attract screen.
import type { Branding, Event as EventT } from '@portico/contract';
import { ok } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { errorText } from '../errors.js';
import { t, term } from '../i18n.js';
import type { Session } from '../session.js';
import { browserZone, instantOf, timeZones, wallOf, zoneLabel } from '../time-zones.js';
import { useAction } from '../hooks.js';
import { METHODS } from '../format.js';
import { ErrorNote } from './feedback.js';
import { Field } from './form.js';

/** What the kiosk shows while nobody is in front of it, in the event's colours. */
export function AttractPreview({ branding, name }: { branding: Branding; name: string }) {
  return (
    <figure>
      <div
        class="attract"
        id="attract-preview"
        style={{ background: branding.primaryColor ?? '#0b5fff', color: '#fff' }}
        aria-label={t('preview')}
      >
        {branding.logoUrl ? <img src={branding.logoUrl} alt="" /> : null}
        <h3>{branding.displayName || name || '—'}</h3>
        {branding.welcomeText ? <p>{branding.welcomeText}</p> : null}
        <span
          class="cta"
          style={{
            background: branding.secondaryColor ?? '#ffffff',
            color: branding.primaryColor ?? '#0b5fff',
          }}
        >
          {t('lookAtCamera')}
        </span>
      </div>
      <figcaption class="muted">{t('preview')}</figcaption>
    </figure>
  );
}

function brandingOf(form: FormData): Branding {
  const s = (k: string) => String(form.get(k) ?? '').trim();
  const b: Branding = { primaryColor: s('primaryColor'), secondaryColor: s('secondaryColor') };
  for (const k of ['displayName', 'logoUrl', 'welcomeText', 'locale'] as const) if (s(k)) b[k] = s(k);
  return b;
}

export function EventForm(props: {
  session: Session;
  event: EventT | null;
  onDone: (e: EventT | null) => void;
}) {
  const { session, event } = props;
  const [branding, setBranding] = useState<Branding>(
    // No language: the event speaks the tenant's default (Settings) until one is chosen here.
    event?.branding ?? { primaryColor: '#0b5fff', secondaryColor: '#ffffff' },
  );
  const [name, setName] = useState(event?.name ?? '');
  // The zone the start and end are typed in: the event's, or the browser's for a new event.
  const [zone, setZone] = useState(event?.timeZone ?? browserZone());
  const save = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const s = (k: string) => String(form.get(k) ?? '').trim();
    const num = (k: string) => (s(k) === '' ? null : Number(s(k)));
    const methods = METHODS.filter((m) => form.get(`method-${m}`) === 'on');
    const lat = num('lat');
    const lng = num('lng');
    const geofence =
      lat !== null && lng !== null ? { center: { lat, lng }, radiusMetres: num('radius') } : null;
    const timeZone = s('timeZone') || 'UTC';
    const fields = {
      name: s('name'),
      startsAt: instantOf(s('startsAt'), timeZone),
      endsAt: instantOf(s('endsAt'), timeZone),
      timeZone,
      branding: brandingOf(form),
    };
    // Said here before anything is sent; the API refuses it the same way (400 ends_before_start).
    if (fields.startsAt && fields.endsAt && fields.endsAt < fields.startsAt) {
      save.setError({ message: errorText('ends_before_start') ?? '', code: 'ends_before_start' });
      document.getElementById('event-ends')?.focus();
      return;
    }
    void save.run(async () => {
      if (!event) {
        const created = ok(
          await session.api.POST('/v1/events', {
            body: { ...fields, capacity: num('capacity'), checkinMethods: methods, geofence },
          }),
        );
        return props.onDone(created);
      }
      const path = { params: { path: { id: event.id } } };
      ok(await session.api.PATCH('/v1/events/{id}', { ...path, body: fields }));
      props.onDone(
        ok(
          await session.api.PATCH('/v1/events/{id}/config', {
            ...path,
            body: { capacity: num('capacity'), checkinMethods: methods, geofence },
          }),
        ),
      );
    });
  };
  const onInput = (e: Event) => {
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBranding(brandingOf(form));
    setName(String(form.get('name') ?? ''));
    setZone(String(form.get('timeZone') ?? zone));
  };

  return (
    <article>
      <h2>{event ? `${t('configure')}: ${event.name}` : t('newEvent')}</h2>
      <form onSubmit={submit} onInput={onInput} id="event-form">
        <div class="grid-2">
          <div>
            <Field label={t('name')}>
              <input name="name" id="event-name" required defaultValue={event?.name ?? ''} />
            </Field>
            <Field label={t('timeZone')} help={t('timeZoneHelp')}>
              <select name="timeZone" id="event-zone" value={zone}>
                {timeZones(zone).map((z) => (
                  <option key={z} value={z}>
                    {zoneLabel(z)}
                  </option>
                ))}
              </select>
            </Field>
            <div class="row">
              <Field label={t('startsAtIn', { zone: zoneLabel(zone) })}>
                <input
                  type="datetime-local"
                  name="startsAt"
                  id="event-starts"
                  defaultValue={wallOf(event?.startsAt, zone)}
                />
              </Field>
              <Field label={t('endsAtIn', { zone: zoneLabel(zone) })}>
                <input
                  type="datetime-local"
                  name="endsAt"
                  id="event-ends"
                  defaultValue={wallOf(event?.endsAt, zone)}
                />
              </Field>
            </div>
            <Field label={t('capacity')}>
              <input
                type="number"
                name="capacity"
                id="event-capacity"
                min="1"
                defaultValue={event?.capacity ?? ''}
              />
            </Field>
            <fieldset>
              <legend>{t('methods')}</legend>
              {METHODS.map((m) => (
                <label key={m}>
                  <input
                    type="checkbox"
                    name={`method-${m}`}
                    defaultChecked={event ? event.checkinMethods.includes(m) : true}
                  />
                  {term('checkinMethod', m)}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>{t('geofence')}</legend>
              <div class="row">
                <Field label={t('latitude')}>
                  <input
                    type="number"
                    step="any"
                    min="-90"
                    max="90"
                    name="lat"
                    defaultValue={event?.geofence?.center.lat ?? ''}
                  />
                </Field>
                <Field label={t('longitude')}>
                  <input
                    type="number"
                    step="any"
                    min="-180"
                    max="180"
                    name="lng"
                    defaultValue={event?.geofence?.center.lng ?? ''}
                  />
                </Field>
              </div>
              <Field label={t('radius')}>
                <input
                  type="number"
                  min="1"
                  name="radius"
                  defaultValue={event?.geofence?.radiusMetres ?? ''}
                />
              </Field>
            </fieldset>
          </div>
          <div>
            <fieldset>
              <legend>{t('branding')}</legend>
              <Field label={t('displayName')}>
                <input name="displayName" defaultValue={event?.branding.displayName ?? ''} />
              </Field>
              <div class="row">
                <Field label={t('primaryColor')}>
                  <input type="color" name="primaryColor" defaultValue={branding.primaryColor ?? '#0b5fff'} />
                </Field>
                <Field label={t('secondaryColor')}>
                  <input
                    type="color"
                    name="secondaryColor"
                    defaultValue={branding.secondaryColor ?? '#ffffff'}
                  />
                </Field>
              </div>
              <Field label={t('logoUrl')}>
                <input type="url" name="logoUrl" defaultValue={event?.branding.logoUrl ?? ''} />
              </Field>
              <Field label={t('welcomeText')}>
                <textarea name="welcomeText" rows={2} defaultValue={event?.branding.welcomeText ?? ''} />
              </Field>
              <Field label={t('locale')}>
                <select name="locale" value={branding.locale ?? ''}>
                  <option value="">{t('localeDefault')}</option>
                  <option value="en">English</option>
                  <option value="pt-BR">Português (Brasil)</option>
                </select>
              </Field>
            </fieldset>
            <AttractPreview branding={branding} name={name} />
          </div>
        </div>
        <ErrorNote error={save.error} />
        <div class="row">
          <button type="submit" id="save-event" aria-busy={save.busy}>
            {event ? t('save') : t('create')}
          </button>
          <button type="button" class="secondary" onClick={() => props.onDone(null)}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </article>
  );
}
