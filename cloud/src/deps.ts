import type { Config } from './config.js';
import type { Bus } from './infra/bus.js';
import type { Clock } from './infra/clock.js';
import type { Cipher } from './infra/crypto.js';
import type { Database } from './infra/db/index.js';
import type { FaceService } from './infra/face.js';
import type { ImageStore } from './infra/image-store.js';
import type { Logger } from './infra/logger.js';
import type { Mailer } from './infra/mail.js';
import type { Secrets } from './infra/secrets.js';
import type { SessionEnds } from './modules/auth/session-ends.js';
import type { FaceGallery } from './modules/faces/gallery.js';
import type { OutboxSignal } from './modules/outbox/signal.js';

/** Everything the application needs from the outside world, built by `createRuntime` or by a test. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  db: Database;
  bus: Bus;
  mailer: Mailer;
  secrets: Secrets;
  cipher: Cipher;
  clock: Clock;
  /** Wakes the outbox workers after a commit that emitted events. */
  outbox: OutboxSignal;
  /** Says, after the commit, that a user's login sessions ended in this process (the live stream ends at once). */
  sessionEnds: SessionEnds;
  /** The face engine of this process (may be starting or unavailable: enrollment then answers 503). */
  face: FaceService;
  /** Per-tenant in-memory face index for 1:N search (enrollment duplicate check, check-in). */
  gallery: FaceGallery;
  /** Encrypted biometric image files under DATA_DIR/images. */
  images: ImageStore;
}
