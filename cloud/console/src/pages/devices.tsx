// Devices: the doors and kiosks of the tenant. A new one is added by a pairing code (shown large with
// its countdown and the command to run on the device, until the device pairs); each can be renamed,
// given its events and revoked after a confirmation. Online means seen in the last 2 minutes.
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { t, term, when } from '../i18n.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { Badge, ErrorNote, Notice } from '../components/feedback.js';
import { Table } from '../components/table.js';
import { Field } from '../components/form.js';
import { ConfirmDialog, FormDialogFooter, Modal } from '../components/dialogs.js';
import { PageHeader } from '../components/page-header.js';

type Device = Schemas['Device'];
type EventItem = Schemas['Event'];
type PairingCode = Schemas['PairingCode'];

/** Where focus goes when the row that opened a dialog has changed. */
const ADD_BUTTON = '#add-device';
/** How often the list is read again while a pairing code waits for its device. */
const PAIRING_POLL_MS = 3_000;

/** The current time, moving every `everyMs`. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

const minutesSeconds = (ms: number) => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** The events to choose from, as checkboxes named `eventIds`. */
function EventChoice(props: {
  events: EventItem[];
  chosen: readonly string[];
  legend: string;
  help: string;
}) {
  return (
    <fieldset class="event-choice">
      <legend>{props.legend}</legend>
      {props.events.length === 0 ? <p class="muted">{t('noEventsYet')}</p> : null}
      {props.events.map((e) => (
        <label key={e.id}>
          <input type="checkbox" name="eventIds" value={e.id} defaultChecked={props.chosen.includes(e.id)} />
          <span>
            {e.name}
            <small class="muted">
              {term('eventStatus', e.status)}
              {e.startsAt ? ` · ${when(e.startsAt)}` : ''}
            </small>
          </span>
        </label>
      ))}
      <small class="muted">{props.help}</small>
    </fieldset>
  );
}

const chosenEvents = (form: HTMLFormElement) => new FormData(form).getAll('eventIds').map(String);

/** Step 1 asks for the name and events; step 2 shows the code until it pairs, expires or is closed. */
function AddDevice(props: {
  session: Session;
  events: EventItem[];
  devices: Device[];
  onDevices: () => void;
  onClose: () => void;
}) {
  const [code, setCode] = useState<PairingCode | null>(null);
  // The devices that existed when the code was made: a new one with its name is the one that paired.
  const [known, setKnown] = useState<ReadonlySet<string>>(new Set());
  const [copied, setCopied] = useState(false);
  const action = useAction();
  const now = useNow(1000);
  // When the code stops working, on this browser's clock (from `expiresIn`, so a browser clock set
  // wrong does not show a working code as expired).
  const [deadline, setDeadline] = useState(0);
  const make = (request: { name: string; eventIds: string[] }) =>
    action.run(async () => {
      const made = ok(await props.session.api.POST('/v1/devices/pairing-codes', { body: request }));
      setDeadline(Date.now() + made.expiresIn * 1000);
      setKnown(new Set(props.devices.map((d) => d.id)));
      setCode(made);
      setCopied(false);
    });
  const paired = code ? props.devices.find((d) => !known.has(d.id) && d.name === code.name) : undefined;
  const left = code ? deadline - Math.max(now, Date.now()) : 0;
  const waiting = code !== null && !paired && left > 0;
  const { onDevices } = props;
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(onDevices, PAIRING_POLL_MS);
    return () => clearInterval(timer);
  }, [waiting, onDevices]);
  useEffect(() => {
    document.getElementById(paired ? 'pairing-done' : code ? 'copy-command' : 'device-name')?.focus();
  }, [code, paired !== undefined]);

  const command = code ? `pnpm agent pair --cloud ${location.origin} --code ${code.code}` : '';
  const copy = async () => {
    await navigator.clipboard.writeText(command).catch(() => undefined);
    setCopied(true);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name') ?? '').trim();
    void make({ name, eventIds: chosenEvents(form) });
  };

  return (
    <Modal id="add-device-dialog" labelledBy="add-device-title" onClose={props.onClose}>
      <article>
        {code === null ? (
          <form onSubmit={submit}>
            <h2 id="add-device-title">{t('addDevice')}</h2>
            <Field label={t('deviceName')} help={t('deviceNameHelp')}>
              <input name="name" id="device-name" required maxLength={100} autocomplete="off" />
            </Field>
            <EventChoice
              events={props.events}
              chosen={[]}
              legend={t('deviceEvents')}
              help={t('deviceEventsHelp')}
            />
            <ErrorNote error={action.error} />
            <FormDialogFooter
              onCancel={props.onClose}
              submitId="get-code"
              busy={action.busy}
              submitLabel={t('getCode')}
            />
          </form>
        ) : (
          <>
            <h2 id="add-device-title">{t('pairTitle', { name: code.name })}</h2>
            {paired ? (
              <Notice message={t('pairedNow', { name: paired.name })} />
            ) : (
              <>
                <p class="muted">{t('pairingCode')}</p>
                <p class={`pairing-code${left > 0 ? '' : ' expired'}`} id="pairing-code">
                  {code.code}
                </p>
                {left > 0 ? (
                  <p id="pairing-expiry">
                    {t('expiresIn', { time: minutesSeconds(left) })}
                    <span class="muted"> · {t('pairingOnce')}</span>
                  </p>
                ) : (
                  <p id="pairing-expiry" class="error" role="alert">
                    {t('pairingExpired')}
                  </p>
                )}
                <p>{t('pairingRun')}</p>
                <pre class="command" id="pairing-command">
                  {/* Wrapped between its words only: a code split over two lines gets typed wrong. */}
                  <code>
                    pnpm agent pair --cloud {location.origin} <span class="nowrap">--code {code.code}</span>
                  </code>
                </pre>
                <div class="row">
                  <button type="button" class="outline" id="copy-command" onClick={() => void copy()}>
                    {copied ? t('copied') : t('copyCommand')}
                  </button>
                  {left > 0 ? null : (
                    <button
                      type="button"
                      id="new-code"
                      aria-busy={action.busy}
                      onClick={() => void make({ name: code.name, eventIds: code.eventIds })}
                    >
                      {t('newCode')}
                    </button>
                  )}
                </div>
                <p class="muted pairing-state" role="status" id="pairing-state">
                  {left > 0 ? t('pairingWaiting') : ''}
                </p>
              </>
            )}
            <ErrorNote error={action.error} />
            <footer>
              <button type="button" id="pairing-done" onClick={props.onClose}>
                {paired ? t('done') : t('close')}
              </button>
            </footer>
          </>
        )}
      </article>
    </Modal>
  );
}

function RenameDevice(props: { session: Session; device: Device; onSaved: () => void; onClose: () => void }) {
  const action = useAction();
  useEffect(() => document.getElementById('rename-name')?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    const name = String(new FormData(e.currentTarget as HTMLFormElement).get('name') ?? '').trim();
    void action.run(async () => {
      ok(
        await props.session.api.PATCH('/v1/devices/{id}', {
          params: { path: { id: props.device.id } },
          body: { name },
        }),
      );
      props.onSaved();
    });
  };
  return (
    <Modal labelledBy="rename-title" onClose={props.onClose} fallbackFocus={ADD_BUTTON}>
      <article>
        <form onSubmit={submit}>
          <h2 id="rename-title">{t('renameTitle', { name: props.device.name })}</h2>
          <Field label={t('deviceName')}>
            <input
              name="name"
              id="rename-name"
              required
              maxLength={100}
              defaultValue={props.device.name}
              autocomplete="off"
            />
          </Field>
          <ErrorNote error={action.error} />
          <FormDialogFooter
            onCancel={props.onClose}
            submitId="rename-save"
            busy={action.busy}
            submitLabel={t('save')}
          />
        </form>
      </article>
    </Modal>
  );
}

function DeviceEvents(props: {
  session: Session;
  device: Device;
  events: EventItem[];
  onSaved: () => void;
  onClose: () => void;
}) {
  const action = useAction();
  useEffect(() => document.querySelector<HTMLElement>('#device-events-dialog input')?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    const eventIds = chosenEvents(e.currentTarget as HTMLFormElement);
    void action.run(async () => {
      ok(
        await props.session.api.PUT('/v1/devices/{id}/events', {
          params: { path: { id: props.device.id } },
          body: { eventIds },
        }),
      );
      props.onSaved();
    });
  };
  return (
    <Modal
      id="device-events-dialog"
      labelledBy="device-events-title"
      onClose={props.onClose}
      fallbackFocus={ADD_BUTTON}
    >
      <article>
        <form onSubmit={submit}>
          <h2 id="device-events-title">{t('eventsOf', { name: props.device.name })}</h2>
          <EventChoice
            events={props.events}
            chosen={props.device.eventIds}
            legend={t('deviceEvents')}
            help={t('deviceEventsHelp')}
          />
          <ErrorNote error={action.error} />
          <FormDialogFooter
            onCancel={props.onClose}
            submitId="device-events-save"
            busy={action.busy}
            submitLabel={t('save')}
          />
        </form>
      </article>
    </Modal>
  );
}

type Open =
  | { kind: 'add' }
  | { kind: 'rename'; device: Device }
  | { kind: 'events'; device: Device }
  | { kind: 'revoke'; device: Device };

/** A device row's buttons: the dialog each opens and its label. */
const ROW_ACTIONS = [
  ['rename', 'rename'],
  ['events', 'editEvents'],
  ['revoke', 'revoke'],
] as const;

function StateBadge({ device }: { device: Device }) {
  if (device.revokedAt) return <Badge tone="bad">{t('revoked')}</Badge>;
  return device.online ? <Badge tone="ok">{t('online')}</Badge> : <Badge>{t('offlineState')}</Badge>;
}

export function Devices({ session }: { session: Session }) {
  const devices = useLoad(async () => ok(await session.api.GET('/v1/devices')).items, []);
  const events = useLoad(
    async () => ok(await session.api.GET('/v1/events', { params: { query: { limit: 200 } } })).items,
    [],
  );
  const [open, setOpen] = useState<Open | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const eventName = new Map((events.data ?? []).map((e) => [e.id, e.name]));
  const close = () => setOpen(null);
  const saved = (message: string) => {
    setOpen(null);
    setNotice(message);
    devices.reload();
  };
  const revoke = (device: Device) =>
    action.run(async () => {
      setOpen(null);
      ok(await session.api.DELETE('/v1/devices/{id}', { params: { path: { id: device.id } } }));
      // Its row loses its buttons (the one that opened the confirmation included).
      document.querySelector<HTMLElement>(ADD_BUTTON)?.focus();
      setNotice(t('deviceRevoked', { name: device.name }));
      devices.reload();
    });

  return (
    <>
      <PageHeader title={t('navDevices')}>
        <button type="button" id="add-device" onClick={() => setOpen({ kind: 'add' })}>
          {t('addDevice')}
        </button>
      </PageHeader>
      <p class="muted">{t('devicesIntro')}</p>
      <Notice message={notice} />
      <ErrorNote error={action.error ?? devices.error ?? events.error} />
      <Table
        id="devices"
        stacked
        head={[
          t('name'),
          t('eventsCol'),
          t('status'),
          t('lastSeen'),
          t('lastSync'),
          t('queueLength'),
          t('actions'),
        ]}
      >
        {(devices.data ?? []).map((d) => (
          <tr key={d.id} data-device={d.id} class={d.revokedAt ? 'revoked' : undefined}>
            <td class="device-name" data-label={t('name')}>
              {d.name}
            </td>
            <td class="device-events" data-label={t('eventsCol')}>
              {d.eventIds.length === 0 ? (
                <span class="muted">—</span>
              ) : (
                d.eventIds.map((id) => eventName.get(id) ?? id).join(', ')
              )}
            </td>
            <td data-label={t('status')}>
              <StateBadge device={d} />
            </td>
            <td data-label={t('lastSeen')}>{when(d.lastSeenAt)}</td>
            <td data-label={t('lastSync')}>{when(d.lastSyncAt)}</td>
            <td data-label={t('queueLength')}>{d.queueLength ?? '—'}</td>
            <td class="device-actions" data-label={t('actions')}>
              {d.revokedAt
                ? null
                : ROW_ACTIONS.map(([kind, label]) => (
                    <button
                      key={kind}
                      type="button"
                      class={kind === 'revoke' ? 'outline contrast' : 'outline'}
                      aria-label={`${t(label)}: ${d.name}`}
                      onClick={() => setOpen({ kind, device: d })}
                    >
                      {t(label)}
                    </button>
                  ))}
            </td>
          </tr>
        ))}
      </Table>
      {devices.data?.length === 0 ? <p class="muted">{t('none')}</p> : null}
      <p class="muted">{t('onlineRule')}</p>

      {open?.kind === 'add' ? (
        <AddDevice
          session={session}
          events={events.data ?? []}
          devices={devices.data ?? []}
          onDevices={devices.reload}
          onClose={() => {
            close();
            devices.reload();
          }}
        />
      ) : null}
      {open?.kind === 'rename' ? (
        <RenameDevice
          session={session}
          device={open.device}
          onSaved={() => saved(t('saved'))}
          onClose={close}
        />
      ) : null}
      {open?.kind === 'events' ? (
        <DeviceEvents
          session={session}
          device={open.device}
          events={events.data ?? []}
          onSaved={() => saved(t('saved'))}
          onClose={close}
        />
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConfirmDialog
          title={t('revokeDeviceTitle', { name: open.device.name })}
          text={t('revokeDeviceConfirm')}
          confirmLabel={t('revoke')}
          fallbackFocus={ADD_BUTTON}
          onConfirm={() => void revoke(open.device)}
          onCancel={close}
        />
      ) : null}
    </>
  );
}
