// What a page says back: a failure, a short confirmation, a badge.
import type { AdminCheckin } from '@portico/contract';
import type { ComponentChildren } from 'preact';
import type { ShownError } from '../errors.js';
import { t, term } from '../i18n.js';

/**
 * A failure in the console's language. The error's code and request id stay at hand for support in a
 * closed "details" line (and the title), never in the sentence itself.
 */
export function ErrorNote({ error }: { error: ShownError | string | null | undefined }) {
  if (!error) return null;
  const shown = typeof error === 'string' ? { message: error } : error;
  const support = [shown.code, shown.requestId].filter(Boolean).join(' · ');
  return (
    <div class="error" role="alert" data-code={shown.code} title={support || undefined}>
      <p class="error-message">{shown.message}</p>
      {support ? (
        <details class="error-support">
          <summary>{t('errorSupport')}</summary>
          <code>{support}</code>
        </details>
      ) : null}
    </div>
  );
}

/** A short confirmation (saved, queued), read out by screen readers; nothing without a message. */
export function Notice({ message }: { message: string | null | undefined }) {
  return message ? (
    <p class="notice" role="status">
      {message}
    </p>
  ) : null;
}

export function Badge(props: { tone?: 'ok' | 'bad' | 'warn'; children: ComponentChildren }) {
  return <span class={`badge ${props.tone ?? ''}`}>{props.children}</span>;
}

/** A check-in outcome as a coloured badge. */
export function OutcomeBadge({ outcome }: { outcome: AdminCheckin['outcome'] }) {
  const tone = outcome === 'success' ? 'ok' : outcome === 'geofence_alert' ? 'warn' : 'bad';
  return <Badge tone={tone}>{term('checkinOutcome', outcome)}</Badge>;
}
