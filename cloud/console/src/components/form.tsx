// Form pieces: a labelled field, the one-time code input, a submitted form's values.
import type { ComponentChildren } from 'preact';

export function Field(props: { label: string; help?: string; children: ComponentChildren }) {
  return (
    <label>
      {props.label}
      {props.children}
      {props.help ? <small>{props.help}</small> : null}
    </label>
  );
}

/** The 6-digit TOTP code of an authenticator app, in a form's field `code`. */
export function CodeInput(props: { id: string; autoFocus?: boolean }) {
  return (
    <input
      name="code"
      id={props.id}
      inputMode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9]{6}"
      required
      autoFocus={props.autoFocus}
    />
  );
}

/** The named fields of a submitted form, as strings (trimmed). */
export function formFields<K extends string>(e: Event, names: readonly K[]): Record<K, string> {
  const form = new FormData(e.currentTarget as HTMLFormElement);
  return Object.fromEntries(names.map((k) => [k, String(form.get(k) ?? '').trim()])) as Record<K, string>;
}
