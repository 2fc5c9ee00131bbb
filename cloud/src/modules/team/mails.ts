// The team invitation mail, in the language the inviter chose (English or Brazilian Portuguese). The
// link's end is written out in words, never as an ISO timestamp.
import type { UserRole } from '@portico/contract';
import type { MailMessage } from '../../infra/mail.js';

export type Language = 'en' | 'pt-BR';

const ROLE: Record<Language, Record<UserRole, string>> = {
  en: { owner: 'an owner', admin: 'an admin', operator: 'an operator' },
  'pt-BR': { owner: 'proprietário(a)', admin: 'administrador(a)', operator: 'operador(a)' },
};

/** e.g. "Saturday, 28 November 2026 at 10:15 UTC" / "sábado, 28 de novembro de 2026 às 10:15 UTC". */
export function untilWords(at: Date, language: Language): string {
  return new Intl.DateTimeFormat(language === 'en' ? 'en-GB' : 'pt-BR', {
    dateStyle: 'full',
    timeStyle: 'short',
    timeZone: 'UTC',
  })
    .format(at)
    .concat(' UTC');
}

export function teamInvitationMail(input: {
  to: string;
  language: Language;
  tenantName: string;
  inviterName: string;
  role: UserRole;
  link: string;
  expiresAt: Date;
}): MailMessage {
  const { to, language, tenantName, inviterName, link } = input;
  const role = ROLE[language][input.role];
  const until = untilWords(input.expiresAt, language);
  if (language === 'pt-BR') {
    return {
      to,
      subject: `Convite para a equipe de ${tenantName} no Portico`,
      text:
        `Olá,\n\n${inviterName} convidou você para a equipe de ${tenantName} no Portico, como ${role}.\n\n` +
        `Abra este link para escolher seu nome e sua senha:\n\n${link}\n\n` +
        `O link funciona uma vez, até ${until}. Se você não esperava este convite, ignore este e-mail.\n`,
    };
  }
  return {
    to,
    subject: `Join the ${tenantName} team on Portico`,
    text:
      `Hello,\n\n${inviterName} invited you to the ${tenantName} team on Portico, as ${role}.\n\n` +
      `Open this link to choose your name and password:\n\n${link}\n\n` +
      `The link works once, until ${until}. If you did not expect this invitation, ignore this e-mail.\n`,
  };
}
