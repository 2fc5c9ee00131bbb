// The mail that confirms a public self-registration (`open_verified`): the enrollment link, in the
// person's language (English or Brazilian Portuguese), its end written out.
import type { PersonLocale } from '@portico/contract';
import type { MailMessage } from '../../infra/mail.js';

export function registrationConfirmMail(
  lang: PersonLocale,
  f: { to: string; name: string; organisation: string; link: string; until: string },
): MailMessage {
  if (lang === 'pt-BR') {
    return {
      to: f.to,
      subject: `Confirme seu cadastro em ${f.organisation}`,
      text:
        `Olá, ${f.name},\n\nAlguém (esperamos que você) cadastrou este endereço em ${f.organisation} para ` +
        `a entrada nos eventos. Abra este link para confirmar e cadastrar seu rosto:\n${f.link}\n\n` +
        `O link funciona uma vez e vale até ${f.until}.\n` +
        'Se não foi você, ignore esta mensagem: nada mais acontece sem o link.\n',
    };
  }
  return {
    to: f.to,
    subject: `Confirm your registration at ${f.organisation}`,
    text:
      `Hello ${f.name},\n\nSomeone (we hope you) registered this address at ${f.organisation} for ` +
      `check-in. Open this link to confirm it and register your face:\n${f.link}\n\n` +
      `The link works once and is valid until ${f.until}.\n` +
      'If you did not register, ignore this message: nothing more happens without the link.\n',
  };
}
