// Operator provisioning of a tenant: not part of the public contract (operators run it through the CLI,
// and the first start seeds a demo tenant with it).
import { z } from '@portico/contract';
import { randomToken, type Cipher } from '../../infra/crypto.js';
import { newId, type Database } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { generatePassword, hashPassword } from '../auth/passwords.js';

export const ProvisionTenantInput = z.object({
  slug: z
    .string()
    .regex(
      /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/,
      'lower-case letters, digits and dashes, 1-40 characters',
    ),
  name: z.string().trim().min(1).max(200),
  adminEmail: z.email().transform((e) => e.toLowerCase()),
  adminPassword: z.string().min(12, 'at least 12 characters').max(256).optional(),
});

export interface ProvisionedTenant {
  tenantId: string;
  slug: string;
  adminEmail: string;
  adminPassword: string;
  webhookSecret: string;
}

export class ProvisionError extends Error {}

/** The context string binding a tenant's webhook secret ciphertext to that tenant. */
export const webhookSecretContext = (tenantId: string) => `tenant:${tenantId}:webhook-secret`;

export async function provisionTenant(
  deps: { db: Database; cipher: Cipher },
  input: z.input<typeof ProvisionTenantInput>,
): Promise<ProvisionedTenant> {
  const parsed = ProvisionTenantInput.safeParse(input);
  if (!parsed.success) {
    throw new ProvisionError(
      parsed.error.issues.map((i) => `--${kebab(String(i.path[0]))}: ${i.message}`).join('\n'),
    );
  }
  const { slug, name, adminEmail } = parsed.data;
  const adminPassword = parsed.data.adminPassword ?? generatePassword();
  const { prisma } = deps.db;
  if (await prisma.tenant.findUnique({ where: { slug } }))
    throw new ProvisionError(`A tenant with slug "${slug}" exists`);
  if (await prisma.user.findUnique({ where: { email: adminEmail } })) {
    throw new ProvisionError(`A user with e-mail ${adminEmail} exists`);
  }
  // After the cheap checks: argon2 costs tens of milliseconds.
  const passwordHash = await hashPassword(adminPassword);
  const webhookSecret = randomToken('whsec_');
  const tenantId = newId();
  await prisma.$transaction(async (tx) => {
    await tx.tenant.create({
      data: {
        id: tenantId,
        slug,
        name,
        webhookSecretEnc: deps.cipher.encryptString(webhookSecret, webhookSecretContext(tenantId)),
      },
    });
    await tx.user.create({
      data: { id: newId(), tenantId, email: adminEmail, passwordHash, role: 'owner', name: 'Administrator' },
    });
    await recordAudit(tx, {
      tenantId,
      actorType: 'operator',
      action: 'tenant.created',
      targetType: 'tenant',
      targetId: tenantId,
      metadata: { slug, adminEmail },
    });
  });
  return { tenantId, slug, adminEmail, adminPassword, webhookSecret };
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
