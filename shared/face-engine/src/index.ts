/**
 * @portico/face-engine: face detection, embedding, quality, liveness signals and 1:N search for the
 * cloud and the device agent. See README.md for error codes, limits and measured figures.
 */
export { createFaceEngine } from './engine.js';
export type { FaceEngine, FaceEngineOptions, FaceEngineStatus } from './engine.js';
export { FaceEngineError, isFaceEngineError } from './errors.js';
export type { FaceEngineErrorCode } from './errors.js';
export { decodeFrame, DEFAULT_LIMITS, MAX_WORKING_SIDE } from './decode.js';
export type { DecodeLimits, DecodedFrame } from './decode.js';
export {
  cosineSimilarity,
  EMBEDDING_DIMENSIONS,
  embeddingFromBuffer,
  embeddingToBuffer,
  meanEmbedding,
} from './embedding.js';
export {
  calibratedScore,
  cohortStats,
  COHORT_SIZE,
  falseMatchRateAt,
  IMPOSTOR_PRIOR,
} from './calibration.js';
export type { CohortStats } from './calibration.js';
export { FaceIndex, FAST_SEARCH_MIN_SIZE } from './face-index.js';
export { CHECK_IN_CANDIDATES, identify } from './open-set.js';
export type { CalibratedHit, IndexRows, SearchHit, SearchMode, SearchOptions } from './face-index.js';
export { EMBEDDER_IDS, EMBEDDING_MODEL_ID, MODELS, MODEL_SOURCE } from './models/manifest.js';
export type { ModelEntry, ModelInput, ModelName } from './models/manifest.js';
export { MODEL_DIR_ENV, resolveModelDir } from './models/model-dir.js';
export { FETCH_COMMAND } from './models/model-store.js';
export { QUALITY_WEIGHTS } from './quality.js';
export type * from './types.js';
