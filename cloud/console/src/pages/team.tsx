// Team: who signs in to the console. Owners and admins invite people by e-mail with a role (the mail's
// link leads to the acceptance page, accept-invite.tsx), change roles, deactivate and reactivate
// (each after a confirmation) and resend a pending invitation. An admin sees no buttons on an owner's
// row (only an owner changes an owner), and nobody on their own row but the role.
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { day, lang, t, when } from '../i18n.js';
import type { TextKey } from '../texts.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { Badge, ErrorNote, Notice } from '../components/feedback.js';
import { Table } from '../components/table.js';
import { Field, formFields } from '../components/form.js';
import { ConfirmDialog, FormDialogFooter, Modal } from '../components/dialogs.js';
import { PageHeader } from '../components/page-header.js';

type Member = Schemas['TeamMember'];
type Role = Member['role'];

const INVITE_BUTTON = '#invite-member';
const ROLE_WORD: Record<Role, TextKey> = { owner: 'roleOwner', admin: 'roleAdmin', operator: 'roleOperator' };
const STATUS_WORD: Record<Member['status'], TextKey> = {
  active: 'memberActive',
  invited: 'memberInvited',
  deactivated: 'memberDeactivated',
};

/** The roles the signed-in user may give: only an owner gives the owner role. */
const rolesFor = (me: Role): Role[] =>
  me === 'owner' ? ['operator', 'admin', 'owner'] : ['operator', 'admin'];

const nameOf = (m: Member) => m.name ?? m.email;

function RoleSelect(props: { id: string; roles: Role[]; value: Role }) {
  return (
    <select name="role" id={props.id} defaultValue={props.value} required>
      {props.roles.map((r) => (
        <option key={r} value={r}>
          {t(ROLE_WORD[r])}
        </option>
      ))}
    </select>
  );
}

function InviteDialog(props: { session: Session; onSent: (email: string) => void; onClose: () => void }) {
  const action = useAction();
  useEffect(() => document.getElementById('invite-email')?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    const { email, role } = formFields(e, ['email', 'role'] as const);
    void action.run(async () => {
      ok(
        await props.session.api.POST('/v1/team/members', {
          body: { email, role: role as Role, language: lang() },
        }),
      );
      props.onSent(email);
    });
  };
  return (
    <Modal id="invite-dialog" labelledBy="invite-title" onClose={props.onClose} fallbackFocus={INVITE_BUTTON}>
      <article>
        <form onSubmit={submit}>
          <h2 id="invite-title">{t('inviteTitle')}</h2>
          <p class="muted">{t('inviteHelp')}</p>
          <Field label={t('email')}>
            <input name="email" id="invite-email" type="email" required maxLength={320} autocomplete="off" />
          </Field>
          <Field label={t('role')} help={t('roleHelp')}>
            <RoleSelect id="invite-role" roles={rolesFor(props.session.me.role)} value="operator" />
          </Field>
          <ErrorNote error={action.error} />
          <FormDialogFooter
            onCancel={props.onClose}
            submitId="invite-send"
            busy={action.busy}
            submitLabel={t('sendInvitation')}
          />
        </form>
      </article>
    </Modal>
  );
}

function RoleDialog(props: {
  session: Session;
  member: Member;
  onSaved: (m: Member) => void;
  onClose: () => void;
}) {
  const action = useAction();
  useEffect(() => document.getElementById('role-choice')?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    const { role } = formFields(e, ['role'] as const);
    void action.run(async () => {
      const saved = ok(
        await props.session.api.PATCH('/v1/team/members/{id}', {
          params: { path: { id: props.member.id } },
          body: { role: role as Role },
        }),
      );
      props.onSaved(saved);
    });
  };
  return (
    <Modal id="role-dialog" labelledBy="role-title" onClose={props.onClose} fallbackFocus={INVITE_BUTTON}>
      <article>
        <form onSubmit={submit}>
          <h2 id="role-title">{t('changeRoleTitle', { name: nameOf(props.member) })}</h2>
          <Field label={t('role')} help={t('changeRoleHelp')}>
            <RoleSelect id="role-choice" roles={rolesFor(props.session.me.role)} value={props.member.role} />
          </Field>
          <ErrorNote error={action.error} />
          <FormDialogFooter
            onCancel={props.onClose}
            submitId="role-save"
            busy={action.busy}
            submitLabel={t('save')}
          />
        </form>
      </article>
    </Modal>
  );
}

function StatusCell({ member }: { member: Member }) {
  const tone = member.status === 'active' ? 'ok' : member.status === 'deactivated' ? 'bad' : 'warn';
  const link = member.invitation;
  return (
    <>
      <Badge tone={tone}>{t(STATUS_WORD[member.status])}</Badge>
      {link ? (
        <small class="muted member-link">
          {' '}
          {link.expired ? t('invitationExpiredShort') : t('invitationUntil', { date: day(link.expiresAt) })}
        </small>
      ) : null}
    </>
  );
}

type Open =
  | { kind: 'invite' }
  | { kind: 'role'; member: Member }
  | { kind: 'deactivate'; member: Member }
  | { kind: 'reactivate'; member: Member };

export function Team({ session }: { session: Session }) {
  const team = useLoad(async () => ok(await session.api.GET('/v1/team/members')).items, []);
  const [open, setOpen] = useState<Open | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const me = session.me;
  const done = (message: string) => {
    setOpen(null);
    setNotice(message);
    team.reload();
  };
  const toggle = (member: Member, kind: 'deactivate' | 'reactivate') =>
    action.run(async () => {
      setOpen(null);
      const params = { path: { id: member.id } };
      if (kind === 'deactivate') ok(await session.api.POST('/v1/team/members/{id}/deactivate', { params }));
      else ok(await session.api.POST('/v1/team/members/{id}/reactivate', { params }));
      document.querySelector<HTMLElement>(INVITE_BUTTON)?.focus();
      done(
        t(kind === 'deactivate' ? 'memberDeactivatedNotice' : 'memberReactivatedNotice', {
          name: nameOf(member),
        }),
      );
    });
  const resend = (member: Member) =>
    action.run(async () => {
      ok(
        await session.api.POST('/v1/team/members/{id}/resend-invitation', {
          params: { path: { id: member.id } },
          body: { language: lang() },
        }),
      );
      done(t('invitationResent', { email: member.email }));
    });

  /** An admin may not touch an owner; nobody deactivates themselves. */
  const mayChange = (m: Member) => me.role === 'owner' || m.role !== 'owner';

  return (
    <>
      <PageHeader title={t('navTeam')}>
        <button type="button" id="invite-member" onClick={() => setOpen({ kind: 'invite' })}>
          {t('inviteMember')}
        </button>
      </PageHeader>
      <p class="muted">{t('teamIntro')}</p>
      <Notice message={notice} />
      <ErrorNote error={action.error ?? team.error} />
      <Table
        id="team"
        stacked
        head={[t('name'), t('email'), t('role'), t('status'), t('twoStepCol'), t('lastSignIn'), t('actions')]}
      >
        {(team.data ?? []).map((m) => (
          <tr key={m.id} data-member={m.email} class={m.status === 'deactivated' ? 'revoked' : undefined}>
            <td class="member-name" data-label={t('name')}>
              {m.name ?? <span class="muted">—</span>}
              {m.id === me.id ? <small class="muted"> ({t('you')})</small> : null}
            </td>
            <td data-label={t('email')}>{m.email}</td>
            <td class="member-role" data-label={t('role')}>
              {t(ROLE_WORD[m.role])}
            </td>
            <td class="member-status" data-label={t('status')}>
              <StatusCell member={m} />
            </td>
            <td data-label={t('twoStepCol')}>{m.mfaEnabled ? t('twoStepOn') : t('twoStepOff')}</td>
            <td data-label={t('lastSignIn')}>{when(m.lastLoginAt)}</td>
            <td class="member-actions" data-label={t('actions')}>
              {mayChange(m) ? (
                <>
                  <button
                    type="button"
                    class="outline"
                    aria-label={`${t('changeRole')}: ${nameOf(m)}`}
                    onClick={() => setOpen({ kind: 'role', member: m })}
                  >
                    {t('changeRole')}
                  </button>
                  {m.status === 'invited' ? (
                    <button
                      type="button"
                      class="outline"
                      aria-label={`${t('resendInvitation')}: ${m.email}`}
                      aria-busy={action.busy}
                      onClick={() => void resend(m)}
                    >
                      {t('resendInvitation')}
                    </button>
                  ) : null}
                  {m.id === me.id ? null : m.status === 'deactivated' ? (
                    <button
                      type="button"
                      class="outline"
                      aria-label={`${t('reactivate')}: ${nameOf(m)}`}
                      onClick={() => setOpen({ kind: 'reactivate', member: m })}
                    >
                      {t('reactivate')}
                    </button>
                  ) : (
                    <button
                      type="button"
                      class="outline contrast"
                      aria-label={`${t('deactivate')}: ${nameOf(m)}`}
                      onClick={() => setOpen({ kind: 'deactivate', member: m })}
                    >
                      {t('deactivate')}
                    </button>
                  )}
                </>
              ) : null}
            </td>
          </tr>
        ))}
      </Table>

      {open?.kind === 'invite' ? (
        <InviteDialog
          session={session}
          onSent={(email) => done(t('invitationSent', { email }))}
          onClose={() => setOpen(null)}
        />
      ) : null}
      {open?.kind === 'role' ? (
        <RoleDialog
          session={session}
          member={open.member}
          onSaved={(m) => done(t('roleChanged', { name: nameOf(m), role: t(ROLE_WORD[m.role]) }))}
          onClose={() => setOpen(null)}
        />
      ) : null}
      {open?.kind === 'deactivate' ? (
        <ConfirmDialog
          title={t('deactivateTitle', { name: nameOf(open.member) })}
          text={t('deactivateConfirm')}
          confirmLabel={t('deactivate')}
          fallbackFocus={INVITE_BUTTON}
          onConfirm={() => void toggle(open.member, 'deactivate')}
          onCancel={() => setOpen(null)}
        />
      ) : null}
      {open?.kind === 'reactivate' ? (
        <ConfirmDialog
          title={t('reactivateTitle', { name: nameOf(open.member) })}
          text={t('reactivateConfirm')}
          confirmLabel={t('reactivate')}
          fallbackFocus={INVITE_BUTTON}
          onConfirm={() => void toggle(open.member, 'reactivate')}
          onCancel={() => setOpen(null)}
        />
      ) : null}
    </>
  );
}
