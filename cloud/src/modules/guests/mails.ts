// The invitation and its reminder, in the guest's language (English or Brazilian Portuguese), the date
// written out in the event's time zone.
import type { PersonLocale } from '@portico/contract';
import type { MailMessage } from '../../infra/mail.js';

export interface InvitationFacts {
  to: string;
  name: string;
  organisation: string;
  event: string;
  /** The start written out (modules/pages/language.ts), or null when the event has no date yet. */
  when: string | null;
  venue: string | null;
  confirmUrl: string;
  checkinUrl: string;
}

export function invitationMail(
  lang: PersonLocale,
  kind: 'invite' | 'reinvite',
  f: InvitationFacts,
): MailMessage {
  if (lang === 'pt-BR') {
    const when = f.when ?? 'data a confirmar';
    return {
      to: f.to,
      subject: `${kind === 'invite' ? 'Convite' : 'Lembrete'}: ${f.event}`,
      text:
        `Olá, ${f.name},\n\n${f.organisation} convida você para ${f.event}: ${when}` +
        `${f.venue ? `, em ${f.venue}` : ''}.\n\n` +
        `Confirme sua presença, adicione o evento à sua agenda e veja seu ingresso (código QR):\n${f.confirmUrl}\n\n` +
        `Na entrada, este link pessoal faz o seu check-in (só quando as portas estiverem abertas):\n${f.checkinUrl}\n\n` +
        'Não compartilhe estes links: eles são pessoais.\n',
    };
  }
  const when = f.when ?? 'date to be announced';
  return {
    to: f.to,
    subject: `${kind === 'invite' ? 'Invitation' : 'Reminder'}: ${f.event}`,
    text:
      `Hello ${f.name},\n\n${f.organisation} invites you to ${f.event}: ${when}` +
      `${f.venue ? `, at ${f.venue}` : ''}.\n\n` +
      `Confirm your attendance, add the event to your calendar and see your ticket (QR code):\n${f.confirmUrl}\n\n` +
      `At the entrance, this personal link checks you in (only once the doors are open):\n${f.checkinUrl}\n\n` +
      'Keep these links to yourself: they are personal.\n',
  };
}
