// The check-in frames a device uploads with its offline decisions: stored encrypted ahead of their
// check-in rows (as online identification stores its probe), or left out with a note, never a reason
// to lose the check-in.
import { SYNC_FRAME_MAX_BYTES, type SyncItem, type TenantSettings } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { newId } from '../../infra/db/index.js';
import { insertRow } from '../../infra/db/statements.js';
import { frameBytes } from '../../infra/face.js';
import type { StoredImage } from '../../infra/image-store.js';

/** A synced frame stored (encrypted) ahead of its check-in row. */
export interface SavedFrame {
  imageId: string;
  stored: StoredImage;
  contentType: 'image/jpeg' | 'image/png';
}

const JPEG = Buffer.from([0xff, 0xd8, 0xff]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The content type of a frame by its magic bytes, or null when it is neither JPEG nor PNG. */
function frameType(bytes: Buffer): SavedFrame['contentType'] | null {
  if (bytes.subarray(0, JPEG.length).equals(JPEG)) return 'image/jpeg';
  if (bytes.subarray(0, PNG.length).equals(PNG)) return 'image/png';
  return null;
}

/**
 * The frames of a batch's new items, stored encrypted before their rows are written (as online
 * identification does). A frame the tenant does not keep, or that is not a JPEG/PNG within the size
 * limit, is not stored: its check-in still is, with a `detail` saying why (a fact is never lost for
 * its picture).
 */
export async function saveFrames(
  deps: Pick<AppDeps, 'images'>,
  tenantId: string,
  settings: TenantSettings,
  items: readonly SyncItem[],
): Promise<{ saved: Map<string, SavedFrame>; notes: Map<string, string> }> {
  const saved = new Map<string, SavedFrame>();
  const notes = new Map<string, string>();
  for (const item of items) {
    if (item.frame === undefined || saved.has(item.clientId) || notes.has(item.clientId)) continue;
    if (!settings.syncCheckinImages) {
      notes.set(
        item.clientId,
        'frame not stored: the tenant does not keep check-in images (syncCheckinImages)',
      );
      continue;
    }
    const bytes = frameBytes(item.frame);
    const contentType = frameType(bytes);
    if (bytes.length > SYNC_FRAME_MAX_BYTES) {
      notes.set(item.clientId, `frame not stored: larger than ${SYNC_FRAME_MAX_BYTES} bytes`);
    } else if (!contentType) {
      notes.set(item.clientId, 'frame not stored: not a JPEG or PNG image');
    } else {
      const imageId = newId();
      saved.set(item.clientId, {
        imageId,
        stored: await deps.images.save(tenantId, imageId, bytes),
        contentType,
      });
    }
  }
  return { saved, notes };
}

/** The `biometric_images` row of a synced check-in's frame, as online identification writes it. */
export const frameRow = (tenantId: string, item: SyncItem, frame: SavedFrame) =>
  insertRow('biometric_images', {
    id: frame.imageId,
    tenant_id: tenantId,
    person_id: item.personId ?? null,
    check_in_id: item.clientId,
    kind: 'checkin',
    storage_key: frame.stored.storageKey,
    content_type: frame.contentType,
    byte_size: frame.stored.byteSize,
    sha256: frame.stored.sha256,
  });

/** Erases the saved frames whose check-in was not written (replayed, lost a race, failed): no file stays. */
export async function discardFrames(
  deps: Pick<AppDeps, 'images'>,
  saved: ReadonlyMap<string, SavedFrame>,
  written: ReadonlySet<string>,
): Promise<void> {
  for (const [clientId, frame] of saved) {
    if (!written.has(clientId)) await deps.images.erase(frame.stored.storageKey).catch(() => undefined);
  }
}
