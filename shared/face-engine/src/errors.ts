/**
 * The one error type of the face engine. `code` is stable: callers map it to HTTP statuses
 * (see README "Error codes"), so never rename a code, only add new ones.
 */
export type FaceEngineErrorCode =
  | 'invalid_base64'
  | 'unsupported_image'
  | 'image_too_large'
  | 'no_face_detected'
  | 'models_missing'
  | 'models_corrupt'
  | 'engine_closed'
  | 'engine_failure';

export class FaceEngineError extends Error {
  override readonly name = 'FaceEngineError';
  constructor(
    readonly code: FaceEngineErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function isFaceEngineError(value: unknown): value is FaceEngineError {
  return value instanceof FaceEngineError;
}
