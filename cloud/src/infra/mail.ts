// Outgoing mail: SMTP when SMTP_URL is set, else each message is written as an .eml file into
// DATA_DIR/mail (and its path logged, never its body: bodies carry one-time links).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { newId } from './db/ids.js';
import type { Logger } from './logger.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<{ messageId: string }>;
  close(): void;
}

export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  outboxDir: string;
  logger: Logger;
}): Mailer {
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      async send(message) {
        const info = await transport.sendMail({ from: options.from, ...message });
        options.logger.info({ messageId: info.messageId, subject: message.subject }, 'mail sent');
        return { messageId: info.messageId };
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      const info = await transport.sendMail({ from: options.from, ...message });
      await mkdir(options.outboxDir, { recursive: true, mode: 0o700 });
      const file = path.join(options.outboxDir, `${newId()}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      options.logger.info({ file, subject: message.subject }, 'mail written to the file outbox');
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}
