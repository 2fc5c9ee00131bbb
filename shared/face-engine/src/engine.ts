/** The engine callers hold: validated models, a worker pool, and the analyse entry point. */
import os from 'node:os';
import { DEFAULT_LIMITS, type DecodeLimits } from './decode.js';
import { EMBEDDING_MODEL_ID } from './models/manifest.js';
import { resolveModelDir } from './models/model-dir.js';
import { loadVerifiedModels } from './models/model-store.js';
import { WorkerPool, type WorkerIsolation } from './pool.js';
import type { AnalyzeOptions, FaceAnalysis, FaceProbe, ProbeOptions } from './types.js';

export interface FaceEngineOptions {
  /** Directory holding the model files; default PORTICO_MODEL_DIR, else `.models/` at the workspace root. */
  readonly modelDir?: string;
  /** Workers; default: one per CPU core (os.availableParallelism()), and one in a thread. */
  readonly workers?: number;
  /**
   * `process` (default): each worker is a process of its own, replaced if it crashes. `thread`: one
   * worker, a thread of this process: about 80 MB less resident memory, but a native crash in a model
   * ends this process (see pool.ts).
   */
  readonly isolation?: WorkerIsolation;
  readonly limits?: Partial<DecodeLimits>;
}

export interface FaceEngineStatus {
  readonly ready: boolean;
  readonly workers: number;
  /** Model runs lent to an idle worker so far (the mirrored embedding of a lone frame). */
  readonly lent: number;
  readonly modelId: string;
  readonly reason?: string;
}

export interface FaceEngine {
  readonly modelId: string;
  /** Everything about the primary face: embedding, quality, head pose (+ liveness signals). Enrollment. */
  analyze(frame: string | Buffer | Uint8Array, options?: AnalyzeOptions): Promise<FaceAnalysis>;
  /** The embedding (+ passive liveness score) only: identification, without the quality models. */
  probe(frame: string | Buffer | Uint8Array, options?: ProbeOptions): Promise<FaceProbe>;
  status(): FaceEngineStatus;
  close(): Promise<void>;
}

/**
 * Verifies the models (throws `models_missing` / `models_corrupt` naming the fetch command) and
 * starts the worker pool; resolves once every worker has its sessions loaded.
 */
export async function createFaceEngine(options: FaceEngineOptions = {}): Promise<FaceEngine> {
  const limits: DecodeLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const modelDir = options.modelDir ?? resolveModelDir();
  const models = await loadVerifiedModels(modelDir);
  const isolation = options.isolation ?? 'process';
  const size = Math.max(
    1,
    Math.floor(options.workers ?? (isolation === 'thread' ? 1 : os.availableParallelism())),
  );
  const pool = await WorkerPool.start(size, models, limits, isolation);
  return {
    modelId: EMBEDDING_MODEL_ID,
    analyze: (frame, analyzeOptions = {}) => pool.run({ kind: 'analyze', frame, options: analyzeOptions }),
    probe: (frame, probeOptions = {}) => pool.run({ kind: 'probe', frame, options: probeOptions }),
    status() {
      const lent = pool.lent;
      if (pool.closed)
        return { ready: false, workers: 0, lent, modelId: EMBEDDING_MODEL_ID, reason: 'closed' };
      const workers = pool.size;
      return workers > 0
        ? { ready: true, workers, lent, modelId: EMBEDDING_MODEL_ID }
        : { ready: false, workers, lent, modelId: EMBEDDING_MODEL_ID, reason: 'no worker running' };
    },
    close: () => pool.close(),
  };
}
