// The signed-in user's own two-step verification: off -> a new secret (QR code and text) confirmed with
// a code -> on, with ten recovery codes shown once (copy, download); on -> new recovery codes with a
// fresh code or the password, or off with a code. Used by Settings and by the setup a tenant requires.
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { t } from '../i18n.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { saveFile } from '../format.js';
import { Badge, ErrorNote, Notice } from './feedback.js';
import { CodeInput, Field } from './form.js';

type Codes = Schemas['RecoveryCodes'];

/** Ten recovery codes, shown this once: copy or download them, then confirm they are saved. */
export function RecoveryCodesOnce(props: { codes: Codes; email: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const text = props.codes.codes.join('\n');
  const copy = async () => {
    await navigator.clipboard.writeText(text).catch(() => undefined);
    setCopied(true);
  };
  const download = () =>
    saveFile(
      new Blob([`${t('recoveryFileHeader', { email: props.email })}\n\n${text}\n`], {
        type: 'text/plain;charset=utf-8',
      }),
      'portico-recovery-codes.txt',
    );
  return (
    <section id="recovery-codes" aria-labelledby="recovery-codes-title">
      <h3 id="recovery-codes-title">{t('recoveryCodesTitle')}</h3>
      <p class="notice">{t('recoveryCodesOnce')}</p>
      <ol class="recovery-codes secret">
        {props.codes.codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <div class="row">
        <button type="button" class="secondary" id="recovery-copy" onClick={() => void copy()}>
          {t('recoveryCopy')}
        </button>
        <button type="button" class="secondary" id="recovery-download" onClick={download}>
          {t('recoveryDownload')}
        </button>
        <button type="button" id="recovery-saved" onClick={props.onDone}>
          {t('recoverySaved')}
        </button>
      </div>
      <Notice message={copied ? t('recoveryCopied') : null} />
    </section>
  );
}

/** How many codes are left, and a new set with a fresh proof (a current code, or the password). */
function RecoveryCodesState({ session, onNew }: { session: Session; onNew: (c: Codes) => void }) {
  const state = useLoad(async () => ok(await session.api.GET('/v1/auth/mfa/recovery-codes')), []);
  const action = useAction();
  const regenerate = (e: Event) => {
    e.preventDefault();
    const proof = String(new FormData(e.currentTarget as HTMLFormElement).get('proof') ?? '').trim();
    const body = /^\d{6}$/.test(proof) ? { code: proof } : { password: proof };
    void action.run(async () => onNew(ok(await session.api.POST('/v1/auth/mfa/recovery-codes', { body }))));
  };
  return (
    <section id="recovery-state">
      <h3>{t('recoveryCodesTitle')}</h3>
      {state.data ? <p id="recovery-left">{t('recoveryLeft', { n: state.data.remaining })}</p> : null}
      <form class="row" onSubmit={regenerate} id="recovery-regenerate-form">
        <Field label={t('recoveryProof')} help={t('recoveryRegenerateHelp')}>
          <input name="proof" id="recovery-proof" type="password" autocomplete="off" required />
        </Field>
        <button type="submit" class="secondary" id="recovery-regenerate" aria-busy={action.busy}>
          {t('recoveryRegenerate')}
        </button>
      </form>
      <ErrorNote error={action.error} />
    </section>
  );
}

/**
 * `onMfaChange` hears whether MFA is on (on load and after each change); with `onSetUp` (the setup a
 * tenant requires) the section only turns MFA on, and calls it once the recovery codes are saved.
 */
export function TwoStep(props: {
  session: Session;
  onMfaChange?: (on: boolean) => void;
  onSetUp?: () => void;
}) {
  const { session } = props;
  const me = useLoad(async () => ok(await session.api.GET('/v1/auth/me')), []);
  useEffect(() => {
    if (me.data) props.onMfaChange?.(me.data.mfaEnabled);
  }, [me.data]);
  const [pending, setPending] = useState<Schemas['MfaSetupResponse'] | null>(null);
  const [codes, setCodes] = useState<Codes | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();

  const start = () =>
    action.run(async () => {
      setNotice(null);
      setPending(ok(await session.api.POST('/v1/auth/mfa/setup')));
    });
  const enable = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    void action.run(async () => {
      const on = ok(
        await session.api.POST('/v1/auth/mfa/enable', {
          body: {
            code: String(form.get('code')).trim(),
            endOtherSessions: form.get('endOtherSessions') === 'on',
          },
        }),
      );
      setPending(null);
      setCodes(on.recoveryCodes);
      setNotice(
        on.endedSessions > 0 ? `${t('mfaNowOn')} ${t('mfaEnded', { n: on.endedSessions })}` : t('mfaNowOn'),
      );
      me.reload();
    });
  };
  const disable = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    void action.run(async () => {
      ok(
        await session.api.DELETE('/v1/auth/mfa/disable', { body: { code: String(form.get('code')).trim() } }),
      );
      setNotice(t('mfaNowOff'));
      me.reload();
    });
  };
  const codesSaved = () => {
    setCodes(null);
    props.onSetUp?.();
  };

  const on = me.data?.mfaEnabled;
  return (
    <article id="mfa">
      {/* In the required setup the page's own heading says it all: no second title, no "off". */}
      {props.onSetUp ? null : <h2>{t('mfaSection')}</h2>}
      <ErrorNote error={me.error} />
      {me.data && !props.onSetUp ? (
        <p id="mfa-state">
          <Badge tone={on ? 'ok' : 'warn'}>{on ? t('on') : t('off')}</Badge>{' '}
          {on ? t('mfaOnHelp') : t('mfaOffHelp')}
        </p>
      ) : null}
      <Notice message={notice} />
      {codes && me.data ? (
        <RecoveryCodesOnce codes={codes} email={me.data.email} onDone={codesSaved} />
      ) : null}
      {on === false && !pending ? (
        <button type="button" id="mfa-start" onClick={() => void start()} aria-busy={action.busy}>
          {t('mfaTurnOn')}
        </button>
      ) : null}
      {on === false && pending ? (
        <form onSubmit={enable} id="mfa-enable-form">
          <p>{t('mfaScan')}</p>
          <img class="qr" src={pending.qrCodeDataUrl} alt={t('mfaQrAlt')} />
          <Field label={t('mfaSecret')}>
            <p class="secret" id="mfa-secret">
              {pending.secret}
            </p>
          </Field>
          <Field label={t('code')}>
            <CodeInput id="mfa-enable-code" />
          </Field>
          <label>
            <input type="checkbox" name="endOtherSessions" />
            {t('mfaEndOthers')}
          </label>
          <ErrorNote error={action.error} />
          <div class="row">
            <button type="submit" id="mfa-enable" aria-busy={action.busy}>
              {t('mfaTurnOn')}
            </button>
            <button type="button" class="secondary" onClick={() => setPending(null)}>
              {t('cancel')}
            </button>
          </div>
        </form>
      ) : null}
      {on && !codes && !props.onSetUp ? (
        <>
          <RecoveryCodesState session={session} onNew={setCodes} />
          <form class="row" onSubmit={disable} id="mfa-disable-form">
            <Field label={t('code')} help={t('mfaOffCode')}>
              <CodeInput id="mfa-disable-code" />
            </Field>
            <button type="submit" class="contrast" id="mfa-disable" aria-busy={action.busy}>
              {t('mfaTurnOff')}
            </button>
          </form>
          <ErrorNote error={action.error} />
        </>
      ) : null}
    </article>
  );
}
