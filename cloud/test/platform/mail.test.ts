import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { createMailer } from '../../src/infra/mail.js';
import { startSmtpSink } from '../support/smtp.js';

const logger = createLogger('silent');

describe('mail', () => {
  it('writes each message as an .eml file when no SMTP server is configured', async () => {
    const outboxDir = await mkdtemp(path.join(os.tmpdir(), 'portico-mail-'));
    const mailer = createMailer({
      smtpUrl: undefined,
      from: 'Portico <no-reply@portico.local>',
      outboxDir,
      logger,
    });
    await mailer.send({ to: 'ana@example.com', subject: 'Your link', text: 'Open https://x/y' });
    const files = await readdir(outboxDir);
    expect(files).toHaveLength(1);
    const eml = await readFile(path.join(outboxDir, files[0]!), 'utf8');
    expect(eml).toMatch(/^To: ana@example.com$/m);
    expect(eml).toMatch(/^Subject: Your link$/m);
    expect(eml).toContain('Open https://x/y');
  });

  it('delivers through a real SMTP exchange when SMTP_URL is set', async () => {
    const smtp = await startSmtpSink();
    const mailer = createMailer({
      smtpUrl: smtp.url,
      from: 'Portico <no-reply@portico.local>',
      outboxDir: '/nonexistent',
      logger,
    });
    try {
      await mailer.send({ to: 'ana@example.com', subject: 'Hello', text: 'Body text' });
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0]).toMatch(/^Subject: Hello/m);
      expect(smtp.messages[0]).toContain('Body text');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});
