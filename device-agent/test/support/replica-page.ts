// Replica pages as the cloud's device feed sends them (GET /v1/sync/events/{token}/replica), for the
// agent's tests: one open event, the policy's defaults overridable, guests enrolled with a template.
import { EMBEDDING_MODEL_ID, embeddingToBuffer } from '@portico/face-engine';
import type { Replica as Page } from '@portico/contract';

/** Guest `g{n}` (person `p{n}`, QR hash `h{n}`), confirmed, enrolled with `embedding` unless null. */
export function replicaGuest(n: number, name: string, embedding: Float32Array | null): Page['items'][number] {
  return {
    guestId: `g${n}`,
    name,
    status: 'confirmed',
    checkedInAt: null,
    personId: `p${n}`,
    qrHash: `h${n}`,
    template: embedding
      ? { modelId: EMBEDDING_MODEL_ID, embedding: embeddingToBuffer(embedding).toString('base64') }
      : null,
  };
}

/** The last page of a complete refresh of an open event with `items`; `policy` overrides its defaults. */
export function replicaPage(items: Page['items'], policy: Partial<Page['policy']> = {}): Page {
  return {
    event: { id: 'e1', name: 'Gala', status: 'open', checkinMethods: [], capacity: null, geofence: null },
    // Asserted: the lines below the accept line came with the three answers (issue 22); an older
    // cloud's page is the same without them.
    policy: {
      tenantId: 't1',
      modelId: EMBEDDING_MODEL_ID,
      matchThreshold: 0.57,
      stepUpThreshold: 0.4,
      probeQualityMin: 0.4,
      stepUpFactors: ['qr', 'staff'],
      requireLiveness: true,
      livenessThreshold: 0.5,
      syncCheckinImages: false,
      ...policy,
    } as Page['policy'],
    items,
    removed: [],
    revokedPersons: [],
    nextCursor: null,
    checkpoint: '1.1',
  };
}
