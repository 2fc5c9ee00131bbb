/** Embedding comparison and (de)serialisation. Encryption at rest is the caller's job. */
import { FaceEngineError } from './errors.js';

export const EMBEDDING_DIMENSIONS = 512;

/** One template from several photos of a person: the L2-normalised mean of their embeddings. */
export function meanEmbedding(embeddings: readonly Float32Array[]): Float32Array {
  if (embeddings.length === 0) throw new RangeError('meanEmbedding needs at least one embedding');
  const out = new Float32Array(embeddings[0]!.length);
  for (const e of embeddings) {
    if (e.length !== out.length)
      throw new RangeError(`embedding lengths differ: ${e.length} vs ${out.length}`);
    for (let i = 0; i < out.length; i++) out[i]! += e[i]!;
  }
  let norm = 0;
  for (const v of out) norm += v * v;
  const inv = 1 / (Math.sqrt(norm) || 1);
  for (let i = 0; i < out.length; i++) out[i]! *= inv;
  return out;
}

export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`embedding lengths differ: ${a.length} vs ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Little-endian float32, 2048 bytes for 512 dimensions; independent of the host's byte order. */
export function embeddingToBuffer(embedding: Float32Array): Buffer {
  const out = Buffer.alloc(embedding.length * 4);
  for (let i = 0; i < embedding.length; i++) out.writeFloatLE(embedding[i]!, i * 4);
  return out;
}

export function embeddingFromBuffer(buffer: Uint8Array): Float32Array {
  if (buffer.length % 4 !== 0) {
    throw new FaceEngineError(
      'engine_failure',
      `embedding buffer length ${buffer.length} is not a multiple of 4`,
    );
  }
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
  const out = new Float32Array(buffer.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}
