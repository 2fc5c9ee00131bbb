// The texts of the e-mails the portal sends, in the person's language (English or Brazilian Portuguese).
import type { MailMessage } from '../../infra/mail.js';
import { writtenWhen } from '../pages/language.js';

export type Language = 'en' | 'pt-BR';

type Texts = Record<Language, { subject: string; text: string }>;

function pick(texts: Texts, language: Language, to: string): MailMessage {
  return { to, ...texts[language] };
}

export function magicLinkMail(to: string, language: Language, link: string, minutes: number): MailMessage {
  return pick(
    {
      en: {
        subject: 'Your sign-in link',
        text: `Open this link to see and manage the data held about you:\n\n${link}\n\nIt works once and expires in ${minutes} minutes. If you did not ask for it, ignore this e-mail.`,
      },
      'pt-BR': {
        subject: 'Seu link de acesso',
        text: `Abra este link para ver e gerenciar os dados mantidos sobre você:\n\n${link}\n\nEle funciona uma vez e expira em ${minutes} minutos. Se você não pediu, ignore este e-mail.`,
      },
    },
    language,
    to,
  );
}

export function deletionConfirmMail(
  to: string,
  language: Language,
  link: string,
  token: string,
  graceHours: number,
): MailMessage {
  return pick(
    {
      en: {
        subject: 'Confirm the deletion of your data',
        text: `You asked us to delete everything held about you. To confirm, open:\n\n${link}\n\nor send this token to the portal: ${token}\n\nThe token is valid for 24 hours. After confirmation the data is erased in ${graceHours} hour(s); until then you can cancel in the portal.`,
      },
      'pt-BR': {
        subject: 'Confirme a exclusão dos seus dados',
        text: `Você pediu a exclusão de todos os dados mantidos sobre você. Para confirmar, abra:\n\n${link}\n\nou envie este código ao portal: ${token}\n\nO código vale por 24 horas. Após a confirmação, os dados são apagados em ${graceHours} hora(s); até lá você pode cancelar no portal.`,
      },
    },
    language,
    to,
  );
}

export function exportReadyMail(to: string, language: Language, link: string, expiresAt: Date): MailMessage {
  // No event here: the instant in UTC, named in words.
  const until = writtenWhen(language, expiresAt, 'UTC');
  return pick(
    {
      en: {
        subject: 'Your data export is ready',
        text: `The archive of the data held about you is ready:\n\n${link}\n\nThe link works until ${until}; the archive is then erased.`,
      },
      'pt-BR': {
        subject: 'Sua exportação de dados está pronta',
        text: `O arquivo com os dados mantidos sobre você está pronto:\n\n${link}\n\nO link funciona até ${until}; depois o arquivo é apagado.`,
      },
    },
    language,
    to,
  );
}

export function signInAlertMail(
  to: string,
  language: Language,
  at: Date,
  userAgent: string | null,
): MailMessage {
  const device = userAgent ?? (language === 'pt-BR' ? 'desconhecido' : 'unknown');
  const when = writtenWhen(language, at, 'UTC');
  return pick(
    {
      en: {
        subject: 'New sign-in to your data portal',
        text: `Your portal account was signed in to on ${when} from: ${device}.\nIf this was not you, end the session in the portal.`,
      },
      'pt-BR': {
        subject: 'Novo acesso ao seu portal de dados',
        text: `Sua conta do portal foi acessada em ${when} a partir de: ${device}.\nSe não foi você, encerre a sessão no portal.`,
      },
    },
    language,
    to,
  );
}
