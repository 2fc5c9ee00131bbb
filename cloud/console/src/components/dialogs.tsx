// Dialogs: a modal that gives focus back when it goes, and the confirmation before something irreversible.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { t } from '../i18n.js';

/**
 * A modal dialog (native `<dialog>`, so focus stays inside and Escape closes it). When it goes, focus
 * returns to what opened it, or to `fallbackFocus` (a selector) when that is gone (e.g. a row's button
 * after the row changed).
 */
export function Modal(props: {
  labelledBy: string;
  describedBy?: string;
  id?: string;
  fallbackFocus?: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    ref.current?.showModal();
    const fallback = props.fallbackFocus;
    return () => {
      const target = opener?.isConnected
        ? opener
        : fallback
          ? document.querySelector<HTMLElement>(fallback)
          : null;
      target?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      id={props.id}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      aria-labelledby={props.labelledBy}
      aria-describedby={props.describedBy}
    >
      {props.children}
    </dialog>
  );
}

/**
 * A modal that asks before something irreversible; the text says what will be erased or stop working,
 * `confirmLabel` what the confirming button does (default "Yes, erase").
 */
export function ConfirmDialog(props: {
  title: string;
  text: string;
  confirmLabel?: string;
  fallbackFocus?: string;
  /** What the button that changes nothing says (default "Cancel"). */
  cancelLabel?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Modal
      labelledBy="confirm-title"
      describedBy="confirm-text"
      onClose={props.onCancel}
      fallbackFocus={props.fallbackFocus}
    >
      <article>
        <h2 id="confirm-title">{props.title}</h2>
        <p id="confirm-text">{props.text}</p>
        <footer>
          <button type="button" class="secondary" onClick={props.onCancel}>
            {props.cancelLabel ?? t('cancel')}
          </button>
          <button type="button" class="contrast" onClick={props.onConfirm}>
            {props.confirmLabel ?? t('confirm')}
          </button>
        </footer>
      </article>
    </Modal>
  );
}

/** A form dialog's footer: Cancel (changes nothing) and the submit button, busy while it runs. */
export function FormDialogFooter(props: {
  onCancel: () => void;
  submitId: string;
  busy: boolean;
  submitLabel: string;
}) {
  return (
    <footer>
      <button type="button" class="secondary" onClick={props.onCancel}>
        {t('cancel')}
      </button>
      <button type="submit" id={props.submitId} aria-busy={props.busy}>
        {props.submitLabel}
      </button>
    </footer>
  );
}
