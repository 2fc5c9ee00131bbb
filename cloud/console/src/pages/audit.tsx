// The audit log: who did what to which record, newest first, filtered by action, actor and time.
import { ok, type Schemas } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { t, when } from '../i18n.js';
import type { Session } from '../session.js';
import { usePages } from '../hooks.js';
import { isoOf } from '../format.js';
import { ErrorNote } from '../components/feedback.js';
import { PagesFooter, Table } from '../components/table.js';
import { Field, formFields } from '../components/form.js';
import { PageHeader } from '../components/page-header.js';

type AdminAuditEntry = Schemas['AdminAuditEntry'];
const FILTERS = ['action', 'actorId', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

export function AuditLog({ session }: { session: Session }) {
  const [filters, setFilters] = useState<Filters>({ action: '', actorId: '', from: '', to: '' });
  // The form's values as the route's query: empty ones left out.
  const query = (f: Filters, cursor?: string) => ({
    limit: 50,
    ...(f.action ? { action: f.action } : {}),
    ...(f.actorId ? { actorId: f.actorId } : {}),
    ...(f.from ? { from: isoOf(f.from) } : {}),
    ...(f.to ? { to: isoOf(f.to) } : {}),
    ...(cursor ? { cursor } : {}),
  });
  const pages = usePages<AdminAuditEntry>(
    async (cursor) =>
      ok(await session.api.GET('/v1/admin/audit-log', { params: { query: query(filters, cursor) } })),
    [filters],
  );
  const { items } = pages;

  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(formFields(e, FILTERS));
  };

  return (
    <>
      <PageHeader title={t('navAudit')} />
      <form class="row" onSubmit={apply} aria-label={t('filter')}>
        <Field label={t('action')}>
          <input name="action" placeholder="person." />
        </Field>
        <Field label={t('actor')}>
          <input name="actorId" />
        </Field>
        <Field label={t('from')}>
          <input type="datetime-local" name="from" />
        </Field>
        <Field label={t('to')}>
          <input type="datetime-local" name="to" />
        </Field>
        <button type="submit">{t('filter')}</button>
      </form>
      <ErrorNote error={pages.error} />
      <Table id="audit" head={[t('when'), t('action'), t('actor'), t('target'), t('details')]}>
        {items.map((e) => (
          <tr key={e.id}>
            <td>{when(e.at)}</td>
            <td>
              <code>{e.action}</code>
            </td>
            <td>
              {e.actorType}
              <br />
              <small class="muted">{e.actorId ?? ''}</small>
            </td>
            <td>
              {e.targetType ?? '—'}
              <br />
              <small class="muted">{e.targetId ?? ''}</small>
            </td>
            <td>
              <small>{Object.keys(e.metadata).length ? JSON.stringify(e.metadata) : ''}</small>
            </td>
          </tr>
        ))}
      </Table>
      <PagesFooter pages={pages} />
    </>
  );
}
