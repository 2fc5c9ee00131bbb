// The face engine of this process, as the API sees it: started in the background so a missing model
// never stops the server from starting (enrollment then answers 503 `engine_unavailable`), and with
// the engine's error codes mapped to API errors. Frames and embeddings are never logged.
import {
  createFaceEngine,
  EMBEDDING_MODEL_ID,
  isFaceEngineError,
  type AnalyzeOptions,
  type FaceAnalysis,
  type FaceEngine,
  type FaceProbe,
  type ProbeOptions,
} from '@portico/face-engine';
import { AppError } from '../http/errors.js';
import type { Logger } from './logger.js';

export interface FaceServiceStatus {
  state: 'starting' | 'ready' | 'unavailable';
  modelId: string;
  workers: number;
  reason?: string;
}

export interface FaceService {
  /**
   * The embedder this service enrolls with (FACE_MODEL): `embedding` and `modelId` of every result are
   * this model's; `embeddings` has every embedder's (a tenant still served by another model uses its own).
   */
  readonly modelId: string;
  status(): FaceServiceStatus;
  /** Resolves once the engine has started or failed to (never rejects). */
  started(): Promise<void>;
  /**
   * Detects, checks and embeds the primary face. Throws AppError: 400 `invalid_base64`,
   * `unsupported_image`, `no_face_detected`; 413 `image_too_large`; 503 `engine_unavailable`.
   */
  analyze(frame: string, options?: AnalyzeOptions): Promise<FaceAnalysis>;
  /** The embedding (and passive liveness score) only, for identification; same errors as `analyze`. */
  probe(frame: string, options?: ProbeOptions): Promise<FaceProbe>;
  close(): Promise<void>;
}

const CALLER_ERRORS: Record<string, { status: number; message: string }> = {
  invalid_base64: { status: 400, message: 'frame is not valid base64' },
  unsupported_image: { status: 400, message: 'frame is not a JPEG or PNG image that can be decoded' },
  image_too_large: { status: 413, message: 'frame is over the size limit (8 MB, 25 megapixels)' },
  no_face_detected: { status: 400, message: 'no face was found in the frame' },
};

const DATA_URL = /^data:[^,]*;base64,/i;

/** The image bytes of a `frame` (base64, with or without a `data:` prefix) already accepted by `analyze`. */
export function frameBytes(frame: string): Buffer {
  return Buffer.from(frame.trim().replace(DATA_URL, '').replace(/\s+/g, ''), 'base64');
}

/** A face's embedding by `modelId`, one of the engine's embedders (a tenant served by another model asks for its own). */
export function embeddingOf(result: Pick<FaceProbe, 'embeddings'>, modelId: string): Float32Array {
  const embedding = result.embeddings[modelId];
  if (!embedding) {
    throw new AppError(503, 'engine_unavailable', 'The biometric engine cannot compute this face model', {
      headers: { 'Retry-After': '30' },
    });
  }
  return embedding;
}

/** Maps a face-engine failure to the API error; anything else is the engine being unavailable. */
export function faceErrorToAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isFaceEngineError(error)) {
    const known = CALLER_ERRORS[error.code];
    if (known) return new AppError(known.status, error.code as never, error.message || known.message);
  }
  return new AppError(503, 'engine_unavailable', 'The biometric engine is not available; try again later', {
    headers: { 'Retry-After': '30' },
  });
}

function wrap(
  modelId: string,
  engine: () => FaceEngine | undefined,
  state: () => FaceServiceStatus,
  started: Promise<void>,
  close: () => Promise<void>,
  logger?: Logger,
): FaceService {
  async function guarded<T>(run: (engine: FaceEngine) => Promise<T>): Promise<T> {
    const current = engine();
    const status = state();
    if (!current || status.state !== 'ready') {
      // The reason (a model path, a fetch command) is for operators: health reports it, not this error.
      throw new AppError(
        503,
        'engine_unavailable',
        `The biometric engine is ${status.state}; try again later`,
        {
          headers: { 'Retry-After': '30' },
        },
      );
    }
    try {
      return await run(current);
    } catch (error) {
      const mapped = faceErrorToAppError(error);
      if (mapped.status >= 500)
        logger?.error({ code: isFaceEngineError(error) ? error.code : 'unknown' }, 'face engine failure');
      throw mapped;
    }
  }
  /** The result as made by this service's model. */
  const ofModel = <T extends FaceProbe>(result: T): T => ({
    ...result,
    embedding: embeddingOf(result, modelId),
    modelId,
  });
  return {
    modelId,
    status: () => ({ ...state(), modelId }),
    started: () => started,
    analyze: (frame, options) => guarded((e) => e.analyze(frame, options)).then(ofModel),
    probe: (frame, options) => guarded((e) => e.probe(frame, options)).then(ofModel),
    close,
  };
}

/** A running engine's own view of itself, in the service's terms. */
function statusOf(engine: FaceEngine): FaceServiceStatus {
  const s = engine.status();
  return s.ready
    ? { state: 'ready', modelId: s.modelId, workers: s.workers }
    : { state: 'unavailable', modelId: s.modelId, workers: s.workers, reason: s.reason ?? 'not ready' };
}

/** Starts an engine in the background (the runtime's one per process). */
export function startFaceService(options: {
  workers?: number;
  modelDir?: string;
  /** The embedder to enroll with; default the engine's default. */
  modelId?: string;
  logger: Logger;
}): FaceService {
  let engine: FaceEngine | undefined;
  let status: FaceServiceStatus = { state: 'starting', modelId: EMBEDDING_MODEL_ID, workers: 0 };
  let closed = false;
  const started = createFaceEngine({
    ...(options.workers ? { workers: options.workers } : {}),
    ...(options.modelDir ? { modelDir: options.modelDir } : {}),
  }).then(
    async (e) => {
      if (closed) return e.close();
      engine = e;
      status = { state: 'ready', modelId: e.modelId, workers: e.status().workers };
      options.logger.info({ workers: status.workers, modelId: e.modelId }, 'face engine ready');
    },
    (error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      status = { state: 'unavailable', modelId: EMBEDDING_MODEL_ID, workers: 0, reason };
      options.logger.error({ reason }, 'face engine unavailable: enrollment and facial check-in answer 503');
    },
  );
  return wrap(
    options.modelId ?? EMBEDDING_MODEL_ID,
    () => engine,
    () => (status.state === 'ready' && engine ? statusOf(engine) : status),
    started,
    async () => {
      closed = true;
      await started;
      await engine?.close();
    },
    options.logger,
  );
}

/** Wraps an engine the caller owns (tests share one per file); `close` leaves it running. */
export function faceServiceOf(engine: FaceEngine, modelId = engine.modelId): FaceService {
  return wrap(
    modelId,
    () => engine,
    () => statusOf(engine),
    Promise.resolve(),
    async () => {},
  );
}

/** A face service that never starts (tests that do not need faces; `reason` is reported by health). */
export function unavailableFaceService(reason: string): FaceService {
  const status: FaceServiceStatus = { state: 'unavailable', modelId: EMBEDDING_MODEL_ID, workers: 0, reason };
  return wrap(
    EMBEDDING_MODEL_ID,
    () => undefined,
    () => status,
    Promise.resolve(),
    async () => {},
  );
}
