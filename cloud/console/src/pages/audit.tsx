// The audit log: who did what to which record, newest first, in words (the actor's name and e-mail, the
// action as a sentence, the details as a short list), filtered by action, actor, record and time; the
// filters live in the page's address.
import { ok, type Schemas } from '@portico/sdk';
import { t, when } from '../i18n.js';
import type { Session } from '../session.js';
import { usePages, useUrlFilters } from '../hooks.js';
import { isoOf } from '../format.js';
import { ErrorNote } from '../components/feedback.js';
import { PagesFooter, Table } from '../components/table.js';
import { Field, formFields } from '../components/form.js';
import { PageHeader } from '../components/page-header.js';
import { AuditActor, AuditDetails, shortId } from '../components/audit-entry.js';
import { actionAreas, actionSentence, targetKind } from '../audit-words.js';

type AdminAuditEntry = Schemas['AdminAuditEntry'];
const FORM_FILTERS = ['action', 'actor', 'from', 'to'] as const;
const FILTERS = [...FORM_FILTERS, 'targetType', 'targetId'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

export function AuditLog({ session }: { session: Session }) {
  const [filters, setFilters] = useUrlFilters(FILTERS);
  // The filters as the route's query: empty ones left out.
  const query = (f: Filters, cursor?: string) => ({
    limit: 50,
    ...(f.action ? { action: f.action } : {}),
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.targetType ? { targetType: f.targetType } : {}),
    ...(f.targetId ? { targetId: f.targetId } : {}),
    ...(f.from ? { from: isoOf(f.from) } : {}),
    ...(f.to ? { to: isoOf(f.to) } : {}),
    ...(cursor ? { cursor } : {}),
  });
  const pages = usePages<AdminAuditEntry>(
    async (cursor) =>
      ok(await session.api.GET('/v1/admin/audit-log', { params: { query: query(filters, cursor) } })),
    [filters.action, filters.actor, filters.targetType, filters.targetId, filters.from, filters.to],
  );
  const { items } = pages;

  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(formFields(e, FORM_FILTERS));
  };
  const areas = actionAreas();

  return (
    <>
      <PageHeader title={t('navAudit')} />
      <form class="row" onSubmit={apply} aria-label={t('filter')}>
        <Field label={t('action')}>
          <select name="action" id="audit-action">
            <option value="">{t('all')}</option>
            {areas.map((area) => (
              <optgroup key={area.prefix} label={area.label}>
                <option value={area.prefix} selected={filters.action === area.prefix}>
                  {area.all}
                </option>
                {area.actions.map((a) => (
                  <option key={a} value={a} selected={filters.action === a}>
                    {actionSentence(a)}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </Field>
        <Field label={t('actor')} help={t('auditActorHelp')}>
          <input name="actor" id="audit-actor" type="search" defaultValue={filters.actor} />
        </Field>
        <Field label={t('from')}>
          <input type="datetime-local" name="from" defaultValue={filters.from} />
        </Field>
        <Field label={t('to')}>
          <input type="datetime-local" name="to" defaultValue={filters.to} />
        </Field>
        <button type="submit">{t('filter')}</button>
      </form>
      {filters.targetId ? (
        <p class="notice" id="audit-record-only">
          {t('auditRecordOnly', {
            what: `${targetKind(filters.targetType).toLowerCase()} ${shortId(filters.targetId)}`,
          })}{' '}
          <button type="button" class="outline" onClick={() => setFilters({ targetType: '', targetId: '' })}>
            {t('showAll')}
          </button>
        </p>
      ) : null}
      <ErrorNote error={pages.error} />
      <Table
        id="audit"
        label={t('navAudit')}
        head={[t('when'), t('action'), t('actor'), t('target'), t('details')]}
      >
        {items.map((e) => (
          <tr key={e.id}>
            <td>{when(e.at)}</td>
            <td>
              <span class="audit-action">{actionSentence(e.action)}</span>
              <br />
              <small class="muted">
                <code>{e.action}</code>
              </small>
            </td>
            <td>
              <AuditActor actor={e.actor} />
            </td>
            <td>
              {e.targetType ? (
                <>
                  {targetKind(e.targetType)}
                  {e.targetId ? (
                    <>
                      <br />
                      <a
                        href={`#/audit?targetType=${encodeURIComponent(e.targetType)}&targetId=${encodeURIComponent(e.targetId)}`}
                        title={`${t('recordHistory')}: ${e.targetId}`}
                        aria-label={`${t('recordHistory')}: ${targetKind(e.targetType)} ${e.targetId}`}
                        onClick={(ev) => {
                          ev.preventDefault();
                          setFilters({ targetType: e.targetType ?? '', targetId: e.targetId ?? '' });
                        }}
                      >
                        <code>{shortId(e.targetId)}</code>
                      </a>
                    </>
                  ) : null}
                </>
              ) : (
                '—'
              )}
            </td>
            <td>
              <AuditDetails metadata={e.metadata} />
            </td>
          </tr>
        ))}
      </Table>
      <PagesFooter pages={pages} />
    </>
  );
}
