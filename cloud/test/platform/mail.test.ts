import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { createMailer } from '../../src/infra/mail.js';

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
    const received: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, done) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push(Buffer.concat(chunks).toString());
          done();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.server.address() as AddressInfo).port;
    const mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      from: 'Portico <no-reply@portico.local>',
      outboxDir: '/nonexistent',
      logger,
    });
    try {
      await mailer.send({ to: 'ana@example.com', subject: 'Hello', text: 'Body text' });
      expect(received).toHaveLength(1);
      expect(received[0]).toMatch(/^Subject: Hello/m);
      expect(received[0]).toContain('Body text');
    } finally {
      mailer.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
