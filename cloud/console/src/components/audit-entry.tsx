// An audit entry's actor and details as a person reads them: a name and an e-mail rather than an id,
// details as "label: value" with long ids shortened (the whole id on hover).
import { Fragment } from 'preact';
import type { Schemas } from '@portico/sdk';
import { t } from '../i18n.js';
import { actorKind, detailLabel, detailWord, removedWord } from '../audit-words.js';

/** The start of a long id, enough to tell two apart on one page. */
export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

const looksLikeId = (s: string) => /^[0-9a-z_-]{20,}$/i.test(s) && /[0-9]/.test(s) && !s.includes(' ');

/** Who acted: the user's name and e-mail, a device's name, a key's application and prefix, or the kind. */
export function AuditActor({ actor }: { actor: Schemas['AdminAuditActor'] }) {
  const kind = actorKind(actor.type);
  if (actor.removed) {
    return (
      <span class="audit-actor">
        {kind} ({removedWord()})
        <br />
        <small class="muted" title={actor.id ?? ''}>
          {shortId(actor.id ?? '')}
        </small>
      </span>
    );
  }
  if (actor.type === 'adminSession') {
    return (
      <span class="audit-actor">
        <strong>{actor.name ?? actor.email}</strong>
        {actor.name && actor.email ? (
          <>
            <br />
            <small class="muted">{actor.email}</small>
          </>
        ) : null}
      </span>
    );
  }
  if (actor.type === 'public' && actor.email) {
    // A sign-in attempt: the user it was for, not yet signed in.
    return (
      <span class="audit-actor">
        <strong>{actor.name ?? actor.email}</strong>
        <br />
        <small class="muted">{actor.name ? `${actor.email} · ${kind}` : kind}</small>
      </span>
    );
  }
  if (actor.name) {
    return (
      <span class="audit-actor">
        <strong>{actor.name}</strong>
        <br />
        <small class="muted">
          {kind}
          {actor.key ? (
            <>
              {' '}
              <code>{actor.key}</code>
            </>
          ) : null}
        </small>
      </span>
    );
  }
  return <span class="audit-actor muted">{kind}</span>;
}

/** One detail's value: lists joined, objects as "key: value", ids shortened, yes/no for booleans. */
function DetailValue({ field, value }: { field: string; value: unknown }) {
  if (value === null || value === undefined || value === '') return <>—</>;
  if (typeof value === 'boolean') return <>{value ? t('yes') : t('no')}</>;
  if (typeof value === 'string') {
    const word = detailWord(field, value);
    if (word) return <>{word}</>;
    return looksLikeId(value) ? (
      <code title={value}>{shortId(value)}</code>
    ) : (
      <>{value.length > 120 ? `${value.slice(0, 120)}…` : value}</>
    );
  }
  if (Array.isArray(value)) {
    return (
      <>
        {value.map((v, i) => (
          <Fragment key={i}>
            {i > 0 ? ', ' : ''}
            <DetailValue field={field} value={v} />
          </Fragment>
        ))}
      </>
    );
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return (
      <>
        {entries.map(([k, v], i) => (
          <Fragment key={k}>
            {i > 0 ? '; ' : ''}
            {detailLabel(k).toLowerCase()}: <DetailValue field={k} value={v} />
          </Fragment>
        ))}
      </>
    );
  }
  return <>{String(value)}</>;
}

/** An entry's details as a short list of "label: value". */
export function AuditDetails({ metadata }: { metadata: Record<string, unknown> }) {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return null;
  return (
    <ul class="audit-details">
      {entries.map(([key, value]) => (
        <li key={key}>
          <small>
            {detailLabel(key)}: <DetailValue field={key} value={value} />
          </small>
        </li>
      ))}
    </ul>
  );
}
