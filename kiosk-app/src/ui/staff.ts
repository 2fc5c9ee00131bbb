// The staff fallback: PIN -> search the event's list on the device -> check a guest in by hand; and
// staff confirming a step-up's candidate against a document. The agent holds the PIN's hash, counts
// wrong PINs and locks out; a session unused for its idle timeout (the agent's `STAFF_SESSION_S`) ends
// and the kiosk returns to attract.
import type { AgentStepUpRequired, DoorAnswer } from '@portico/contract';
import { ENUM_WORDS } from '@portico/contract/words';
import { agent, type AgentReply } from './agent-client.js';
import { screenAfter, type IdentifyReply } from './answers.js';
import { eventPath, failure, go, h, kiosk, root, show, wait, type Handler, type StaffGuest } from './core.js';

const PIN_IDLE_MS = 30_000;
let session: { token: string; idleMs: number } | null = null;
let idleTimer: number | undefined;

function idle(ms: number) {
  clearTimeout(idleTimer);
  idleTimer = window.setTimeout(() => void endSession(), ms);
}

/** Ends the staff session (at the agent too) and, unless `next` says otherwise, returns to attract. */
async function endSession(next: (() => void) | null = () => go({ kind: 'attract', armed: true })) {
  clearTimeout(idleTimer);
  const ending = session;
  session = null;
  next?.();
  if (ending) await agent('DELETE', '/staff/session', undefined, ending.token).catch(() => undefined);
}

const call = <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<AgentReply<T> | null> =>
  agent<T>(method, path, body, session?.token).catch(() => null);

function keypad(keys: string[], press: (key: string) => void, cls: string) {
  const pad = h('div', { class: cls });
  for (const key of keys) {
    const b = h(
      'button',
      { class: 'key', 'data-key': key },
      key === 'Backspace' ? '⌫' : key === ' ' ? '␣' : key,
    );
    b.addEventListener('click', () => press(key));
    pad.append(b);
  }
  return pad;
}

/** The PIN pad; a right PIN opens a staff session, then the guest search or the step-up's candidate. */
export const staffPin: Handler<'staff-pin'> = ({ then }, signal) => {
  const { t } = kiosk;
  let pin = '';
  const dots = h('div', { class: 'pin-dots', id: 'pin-dots' });
  const message = h('p', { class: 'staff-msg', id: 'staff-msg', role: 'alert' });
  const paint = () => (dots.textContent = pin ? '●'.repeat(pin.length) : '–');
  const submit = async () => {
    if (!pin) return;
    const tried = pin;
    pin = '';
    paint();
    const answer = await agent<{ token: string; idleTimeoutS: number }>('POST', '/staff/session', {
      pin: tried,
    }).catch(() => null);
    if (signal.aborted) return;
    if (answer?.status === 200) {
      session = { token: answer.body.token, idleMs: answer.body.idleTimeoutS * 1000 };
      return then === 'search' ? go({ kind: 'staff-search' }) : void confirmStepUp(then.stepUp);
    }
    message.textContent = !answer
      ? t.unavailable
      : answer.status === 429
        ? t.staffLocked(answer.retryAfterS)
        : answer.status === 503
          ? t.staffUnavailable
          : t.wrongPin;
    message.dataset.code = answer?.body.code ?? '';
  };
  const press = (key: string) => {
    idle(PIN_IDLE_MS);
    if (key === 'Backspace') pin = pin.slice(0, -1);
    else if (key === 'OK') return void submit();
    else if (/^\d$/.test(key) && pin.length < 12) pin += key;
    paint();
  };
  const main = show(
    'staff-pin',
    h('h1', {}, t.staffPinTitle),
    dots,
    message,
    keypad(['1', '2', '3', '4', '5', '6', '7', '8', '9', 'Backspace', '0', 'OK'], press, 'pinpad'),
    h('button', { id: 'staff-cancel', class: 'secondary' }, t.cancel),
  );
  paint();
  main.querySelector('#staff-cancel')!.addEventListener('click', () => void endSession());
  main.addEventListener('keydown', (e) => {
    if (/^\d$/.test(e.key) || e.key === 'Backspace') press(e.key);
    if (e.key === 'Enter') press('OK');
  });
  main.tabIndex = -1;
  main.focus();
  idle(PIN_IDLE_MS);
};

export const staffSearch: Handler<'staff-search'> = () => {
  const { t } = kiosk;
  if (!session) return go({ kind: 'attract', armed: true });
  idle(session.idleMs);
  const input = h('input', {
    id: 'staff-q',
    type: 'search',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: t.staffTypeName,
  }) as HTMLInputElement;
  const list = h('div', { class: 'staff-results', id: 'staff-results', role: 'list' });
  let asked = 0;
  const search = async () => {
    const mine = ++asked;
    const q = input.value.trim();
    if (!q) return list.replaceChildren();
    const answer = await call<{ items: StaffGuest[] }>(
      'GET',
      `${eventPath}/guests?q=${encodeURIComponent(q)}&limit=3`,
    );
    if (mine !== asked) return;
    if (answer?.status === 401) return void endSession();
    const items = answer?.status === 200 ? answer.body.items : [];
    list.replaceChildren(
      ...(items.length === 0
        ? [h('p', { class: 'sub' }, answer?.status === 200 ? t.staffNoMatch : t.unavailable)]
        : items.map((g) => {
            const row = h(
              'button',
              { class: 'guest-row', 'data-guest-id': g.guestId, role: 'listitem' },
              h('span', { class: 'name' }, g.name),
              ...(g.checkedIn
                ? [h('span', { class: 'badge' }, ENUM_WORDS[kiosk.lang].guestStatus.checked_in)]
                : []),
            );
            row.addEventListener('click', () => void checkIn(g));
            return row;
          })),
    );
  };
  let debounce: number | undefined;
  const changed = () => {
    idle(session?.idleMs ?? 0);
    clearTimeout(debounce);
    debounce = window.setTimeout(() => void search(), 150);
  };
  input.addEventListener('input', changed);
  // Three rows of ten: QWERTYUIOP / ASDFGHJKL ⌫ / ZXCVBNM and a wide space.
  const letters = [...'QWERTYUIOPASDFGHJKL', 'Backspace', ...'ZXCVBNM', ' '];
  const type = (key: string) => {
    input.value = key === 'Backspace' ? input.value.slice(0, -1) : input.value + key.toLowerCase();
    changed();
  };
  const main = show(
    'staff-search',
    h(
      'div',
      { class: 'staff-bar' },
      h('h1', {}, t.staffSearchTitle),
      h('button', { id: 'staff-done', class: 'secondary' }, t.done),
    ),
    input,
    list,
    keypad(letters, type, 'keyboard'),
  );
  main.querySelector('#staff-done')!.addEventListener('click', () => void endSession());
  input.focus();
};

async function checkIn(guest: StaffGuest) {
  const { t } = kiosk;
  if (!session) return go({ kind: 'attract', armed: true });
  idle(session.idleMs);
  const waiting = wait();
  const answer = await call<DoorAnswer>('POST', `${eventPath}/manual`, { guestId: guest.guestId });
  if (!session || !waiting()) return;
  if (answer?.status === 401) return void endSession();
  const a = answer?.status === 200 ? answer.body : null;
  const admitted = a?.outcome === 'success' || a?.outcome === 'geofence_alert';
  const [look, title] = !a
    ? ['error', t.unavailable]
    : admitted
      ? ['welcome', t.staffCheckedIn(guest.name)]
      : a.reason === 'event_closed'
        ? ['closed', t.closed]
        : a.reason === 'already_checked_in'
          ? ['closed', t.staffAlreadyIn(guest.name)]
          : a.reason === 'capacity_reached'
            ? ['full', t.full]
            : ['closed', t.manualNotAllowed];
  go({ kind: 'staff-result', look, title, admitted });
}

export const staffResult: Handler<'staff-result'> = ({ look, title, admitted }) => {
  const { t } = kiosk;
  show(
    `result staff-result ${look}`,
    h('div', { class: 'icon', 'aria-hidden': 'true' }, admitted ? '✓' : '!'),
    h('h1', { id: 'result-title' }, title),
    h(
      'div',
      { class: 'staff-actions' },
      h('button', { id: 'staff-next', class: 'primary' }, t.nextGuest),
      h('button', { id: 'staff-done', class: 'secondary' }, t.done),
    ),
  );
  root.querySelector('#staff-next')!.addEventListener('click', () => go({ kind: 'staff-search' }));
  root.querySelector('#staff-done')!.addEventListener('click', () => void endSession());
};

/** Staff, in a session opened with their PIN: the candidate's name to check on a document. */
async function confirmStepUp(stepUp: AgentStepUpRequired) {
  const candidate = await call<{ name: string }>('GET', `/step-up/${encodeURIComponent(stepUp.attemptId)}`);
  if (candidate?.status === 200) return go({ kind: 'step-up-confirm', stepUp, name: candidate.body.name });
  // Used, expired or gone meanwhile: the answer's status says so.
  await endSession(null);
  go(candidate ? screenAfter(candidate as IdentifyReply, 'step-up') : failure());
}

/** Yes or no; either way the staff session ends with the answer. */
export const stepUpConfirm: Handler<'step-up-confirm'> = ({ stepUp, name }) => {
  const { t } = kiosk;
  const decide = async (confirmed: boolean) => {
    const waiting = wait();
    const answer = await call<IdentifyReply['body']>(
      'POST',
      `/step-up/${encodeURIComponent(stepUp.attemptId)}`,
      {
        factor: 'staff',
        confirmed,
      },
    );
    await endSession(null);
    if (waiting()) go(answer ? screenAfter(answer as IdentifyReply, 'step-up') : failure());
  };
  const main = show(
    'step-up-confirm',
    h('h1', { id: 'step-up-name' }, t.stepUpConfirmTitle(name)),
    h('p', { class: 'sub' }, t.stepUpConfirmSub),
    h(
      'div',
      { class: 'staff-actions' },
      h('button', { id: 'step-up-yes', class: 'primary' }, t.stepUpYes),
      h('button', { id: 'step-up-no', class: 'secondary' }, t.stepUpNo),
    ),
  );
  main.querySelector('#step-up-yes')!.addEventListener('click', () => void decide(true));
  main.querySelector('#step-up-no')!.addEventListener('click', () => void decide(false));
};
