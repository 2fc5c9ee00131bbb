// Undoing a check-in: what it means (the place freed, the person may come in again), a reason with two
// ready-made ones, and the confirming button. The door and Check-ins open it.
import { useState } from 'preact/hooks';
import { t } from '../i18n.js';
import { Field } from './form.js';
import { Modal } from './dialogs.js';

export function UndoDialog(props: {
  name: string;
  busy: boolean;
  onCancel: () => void;
  onUndo: (reason: string) => void;
  /** Where focus goes when the button that opened the dialog is gone. */
  fallbackFocus?: string;
}) {
  const [reason, setReason] = useState('');
  const name = props.name;
  return (
    <Modal
      labelledBy="undo-title"
      describedBy="undo-text"
      fallbackFocus={props.fallbackFocus}
      onClose={props.onCancel}
    >
      <article>
        <h2 id="undo-title">{t('undoTitle', { name })}</h2>
        <p id="undo-text">{t('undoText', { name })}</p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            props.onUndo(reason.trim());
          }}
        >
          <Field label={t('reason')} help={t('reasonHelp')}>
            <input
              id="undo-reason"
              required
              minLength={3}
              maxLength={500}
              autoFocus
              value={reason}
              onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
            />
          </Field>
          <div class="row reasons">
            {(['reasonWrongGuest', 'reasonTest'] as const).map((k) => (
              <button type="button" key={k} class="secondary outline" onClick={() => setReason(t(k))}>
                {t(k)}
              </button>
            ))}
          </div>
          <footer>
            <button type="button" class="secondary" onClick={props.onCancel}>
              {t('cancel')}
            </button>
            <button type="submit" id="undo-confirm" class="contrast" aria-busy={props.busy}>
              {t('undoConfirm')}
            </button>
          </footer>
        </form>
      </article>
    </Modal>
  );
}
