// The mail that carries a person's enrollment link, in their language (English or Brazilian Portuguese).
import type { PersonLocale } from '@portico/contract';
import type { MailMessage } from '../../infra/mail.js';

export function enrollmentLinkMail(
  lang: PersonLocale,
  f: { to: string; name: string; organisation: string; link: string; until: string },
): MailMessage {
  if (lang === 'pt-BR') {
    return {
      to: f.to,
      subject: `Cadastre seu rosto para a entrada: ${f.organisation}`,
      text:
        `Olá, ${f.name},\n\n${f.organisation} pede que você cadastre seu rosto para a entrada nos eventos. ` +
        `Abra este link:\n${f.link}\n\n` +
        `O link funciona uma vez e vale até ${f.until}.\n` +
        'Se você não esperava esta mensagem, ignore-a.\n',
    };
  }
  return {
    to: f.to,
    subject: `Register your face for check-in: ${f.organisation}`,
    text:
      `Hello ${f.name},\n\n${f.organisation} asks you to register your face for check-in at its events. ` +
      `Open this link:\n${f.link}\n\n` +
      `The link works once and is valid until ${f.until}.\n` +
      'If you did not expect this message, ignore it.\n',
  };
}
