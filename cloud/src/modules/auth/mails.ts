// The mails a tenant user receives about their own account, in their console language (English or
// Brazilian Portuguese): the password-reset link, a password changed, a recovery code used, MFA reset
// by the operator, a reset started by the operator.
import type { ConsoleLanguage } from '@portico/contract';
import type { MailMessage } from '../../infra/mail.js';

type Texts = Record<ConsoleLanguage, { subject: string; text: string }>;

const pick = (texts: Texts, language: ConsoleLanguage, to: string): MailMessage => ({
  to,
  ...texts[language],
});

/** The language of mails to a user: the one their console last sent, else English. */
export const mailLanguage = (stored: string | null | undefined): ConsoleLanguage =>
  stored === 'pt-BR' ? 'pt-BR' : 'en';

export function passwordResetLinkMail(
  to: string,
  language: ConsoleLanguage,
  link: string,
  minutes: number,
): MailMessage {
  return pick(
    {
      en: {
        subject: 'Reset your Portico password',
        text: `Someone (hopefully you) asked to reset the password of your Portico console account. Choose a new password here:\n\n${link}\n\nThe link works once, for ${minutes} minutes. Resetting the password signs you out everywhere; your two-step verification stays as it is.\n\nIf you did not ask for this, ignore this e-mail: your password does not change.`,
      },
      'pt-BR': {
        subject: 'Redefina sua senha do Portico',
        text: `Alguém (provavelmente você) pediu para redefinir a senha da sua conta no console do Portico. Escolha uma nova senha aqui:\n\n${link}\n\nO link funciona uma vez, por ${minutes} minutos. Redefinir a senha encerra todas as suas sessões; sua verificação em duas etapas continua como está.\n\nSe você não pediu isso, ignore este e-mail: sua senha não muda.`,
      },
    },
    language,
    to,
  );
}

export function passwordChangedMail(
  to: string,
  language: ConsoleLanguage,
  endedSessions: number,
): MailMessage {
  return pick(
    {
      en: {
        subject: 'Your Portico password was changed',
        text: `The password of your Portico console account was just changed with a reset link, and every session was ended (${endedSessions}).\n\nIf this was not you, ask your organisation's Portico operator to reset your account at once.`,
      },
      'pt-BR': {
        subject: 'Sua senha do Portico foi alterada',
        text: `A senha da sua conta no console do Portico acabou de ser alterada com um link de redefinição, e todas as sessões foram encerradas (${endedSessions}).\n\nSe não foi você, peça agora ao operador do Portico da sua organização que redefina sua conta.`,
      },
    },
    language,
    to,
  );
}

export function recoveryCodeUsedMail(to: string, language: ConsoleLanguage, left: number): MailMessage {
  return pick(
    {
      en: {
        subject: 'A recovery code was used to sign in',
        text: `A recovery code was just used to sign in to your Portico console account in place of your authenticator app. ${left} recovery code(s) left.\n\nIf you lost your authenticator, sign in and, under Settings, turn two-step verification off and on again with the new device, then keep the new recovery codes safe. If this was not you, change your password now and tell your organisation's Portico operator.`,
      },
      'pt-BR': {
        subject: 'Um código de recuperação foi usado para entrar',
        text: `Um código de recuperação acabou de ser usado para entrar na sua conta do console do Portico no lugar do seu aplicativo autenticador. Restam ${left} código(s) de recuperação.\n\nSe você perdeu o autenticador, entre e, em Configurações, desative e ative de novo a verificação em duas etapas com o novo aparelho, e guarde os novos códigos de recuperação. Se não foi você, troque sua senha agora e avise o operador do Portico da sua organização.`,
      },
    },
    language,
    to,
  );
}

export function mfaResetByOperatorMail(to: string, language: ConsoleLanguage): MailMessage {
  return pick(
    {
      en: {
        subject: 'Two-step verification was turned off on your account',
        text: `The Portico operator turned off two-step verification on your console account (its authenticator secret and recovery codes no longer work). You now sign in with your password alone.\n\nSign in and turn it on again under Settings, with your new device. If you did not ask for this, tell your organisation's Portico operator at once.`,
      },
      'pt-BR': {
        subject: 'A verificação em duas etapas foi desativada na sua conta',
        text: `O operador do Portico desativou a verificação em duas etapas da sua conta no console (o segredo do autenticador e os códigos de recuperação não funcionam mais). Agora você entra só com a senha.\n\nEntre e ative-a de novo em Configurações, com o seu novo aparelho. Se você não pediu isso, avise agora o operador do Portico da sua organização.`,
      },
    },
    language,
    to,
  );
}

export function resetByOperatorMail(to: string, language: ConsoleLanguage): MailMessage {
  return pick(
    {
      en: {
        subject: 'Your Portico sessions were ended for a password reset',
        text: `The Portico operator started a password reset of your console account: every session was ended, and the operator will give you a one-time link to choose a new password.\n\nIf you did not ask for this, tell your organisation's Portico operator at once.`,
      },
      'pt-BR': {
        subject: 'Suas sessões do Portico foram encerradas para redefinir a senha',
        text: `O operador do Portico iniciou a redefinição da senha da sua conta no console: todas as sessões foram encerradas, e o operador vai lhe passar um link de uso único para escolher uma nova senha.\n\nSe você não pediu isso, avise agora o operador do Portico da sua organização.`,
      },
    },
    language,
    to,
  );
}
