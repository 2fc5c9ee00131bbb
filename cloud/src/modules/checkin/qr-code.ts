// A check-in QR code as a scan resolves it: its row when the code is a live QR code of an active
// identity of an active tenant, null otherwise (a suspended tenant's or a revoked code counts as unknown).
import type { AppDeps } from '../../deps.js';
import { hashToken } from '../../infra/crypto.js';

export async function activeQrCode(prisma: AppDeps['db']['prisma'], token: string) {
  const found = await prisma.checkinToken.findUnique({
    where: { tokenHash: hashToken(token) },
    include: {
      identity: { select: { personId: true, status: true, person: { select: { email: true } } } },
      tenant: { select: { status: true, settings: true } },
    },
  });
  const live =
    found &&
    found.kind === 'qr' &&
    !found.revokedAt &&
    found.identity.status === 'active' &&
    found.tenant.status === 'active';
  return live ? found : null;
}
