// The `jobs` table as a durable queue for the portal's background work: e-mails (sealed with the data
// key: they carry one-time links and personal data), data-export builds and deletion completions.
// A job is written in the transaction of the change that causes it and claimed with FOR UPDATE SKIP
// LOCKED, so it survives restarts and runs once across processes.
import { Prisma } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import { newId, type Tx } from '../../infra/db/index.js';
import type { MailMessage } from '../../infra/mail.js';

export type JobKind =
  'mail.send' | 'export.build' | 'deletion.complete' | 'portal.magic_link' | 'auth.password_reset';

/** A claimed job is someone's for this long; a crashed process's jobs are claimed again after it. */
const LEASE_MS = 5 * 60_000;
const MAX_ATTEMPTS = 5;
const BATCH = 5;
/** Waits before attempts 2..5 of a failed job. */
const BACKOFF_MS = [10_000, 60_000, 5 * 60_000, 30 * 60_000];

export interface JobRow {
  id: string;
  kind: JobKind;
  payload: Record<string, unknown>;
  attempts: number;
}

export async function enqueueJob(
  tx: Pick<Tx, 'job'>,
  job: { kind: JobKind; payload: Prisma.InputJsonObject; runAt: Date; tenantId?: string | null },
): Promise<string> {
  const id = newId();
  await tx.job.create({
    data: { id, kind: job.kind, payload: job.payload, runAt: job.runAt, tenantId: job.tenantId ?? null },
  });
  return id;
}

const mailContext = (jobId: string) => `job-mail:${jobId}`;

/** Queues an e-mail; its recipient and body are stored encrypted, bound to the job's id. */
export async function enqueueMail(
  tx: Pick<Tx, 'job'>,
  deps: Pick<AppDeps, 'cipher'>,
  message: MailMessage,
  now: Date,
): Promise<void> {
  const id = newId();
  const sealed = deps.cipher.encryptString(JSON.stringify(message), mailContext(id)).toString('base64');
  await tx.job.create({ data: { id, kind: 'mail.send', payload: { sealed }, runAt: now } });
}

const sealedContext = (jobId: string) => `job-sealed:${jobId}`;

/** Queues a job whose payload carries personal data: stored encrypted, bound to the job's id. */
export async function enqueueSealedJob(
  tx: Pick<Tx, 'job'>,
  deps: Pick<AppDeps, 'cipher'>,
  job: { kind: Exclude<JobKind, 'mail.send'>; data: Record<string, unknown>; runAt: Date },
): Promise<void> {
  const id = newId();
  const sealed = deps.cipher.encryptString(JSON.stringify(job.data), sealedContext(id)).toString('base64');
  await tx.job.create({ data: { id, kind: job.kind, payload: { sealed }, runAt: job.runAt } });
}

/** The data of a job queued by `enqueueSealedJob`. */
export function openSealedJob(deps: Pick<AppDeps, 'cipher'>, job: JobRow): unknown {
  const sealed = Buffer.from(String(job.payload.sealed), 'base64');
  return JSON.parse(deps.cipher.decryptString(sealed, sealedContext(job.id)));
}

export type JobHandlers = Record<Exclude<JobKind, 'mail.send'>, (job: JobRow) => Promise<void>>;

/** One claim-and-run pass for a worker loop; true when a full batch was claimed (there may be more). */
export function createJobRunner(
  deps: Pick<AppDeps, 'db' | 'clock' | 'cipher' | 'mailer' | 'logger'>,
  handlers: JobHandlers,
) {
  const { prisma } = deps.db;
  async function claim(): Promise<JobRow[]> {
    const now = deps.clock.now();
    const lease = new Date(now.getTime() + LEASE_MS);
    return prisma.$queryRaw<JobRow[]>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_until = ${lease}
      WHERE id IN (
        SELECT id FROM jobs
        WHERE kind IN (${Prisma.join(['mail.send', ...Object.keys(handlers)])})
          AND ((status = 'pending' AND run_at <= ${now}) OR (status = 'running' AND locked_until < ${now}))
        ORDER BY run_at LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, payload, attempts`;
  }
  async function run(job: JobRow): Promise<void> {
    if (job.kind === 'mail.send') {
      const sealed = Buffer.from(String(job.payload.sealed), 'base64');
      const message = JSON.parse(deps.cipher.decryptString(sealed, mailContext(job.id))) as MailMessage;
      await deps.mailer.send(message);
      return;
    }
    await handlers[job.kind](job);
  }
  return {
    async runOnce(): Promise<boolean> {
      const jobs = await claim();
      for (const job of jobs) {
        try {
          await run(job);
          // A sent mail's (or a link request's) sealed body has no further use: dropped with the success.
          const spent = ['mail.send', 'portal.magic_link', 'auth.password_reset'].includes(job.kind);
          await prisma.job.update({
            where: { id: job.id },
            data: {
              status: 'done',
              finishedAt: deps.clock.now(),
              lockedUntil: null,
              ...(spent ? { payload: {} } : {}),
            },
          });
        } catch (err) {
          const last = job.attempts >= MAX_ATTEMPTS;
          deps.logger.error({ err, jobId: job.id, kind: job.kind, attempt: job.attempts }, 'job failed');
          const wait = BACKOFF_MS[Math.min(job.attempts - 1, BACKOFF_MS.length - 1)]!;
          await prisma.job.update({
            where: { id: job.id },
            data: {
              status: last ? 'failed' : 'pending',
              lockedUntil: null,
              runAt: new Date(deps.clock.now().getTime() + wait),
              // The name only: an SMTP error's message can quote the recipient's address.
              lastError: err instanceof Error ? err.name : 'Error',
              ...(last ? { finishedAt: deps.clock.now() } : {}),
            },
          });
        }
      }
      return jobs.length === BATCH;
    },
  };
}
