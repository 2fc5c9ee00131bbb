// The kiosk's live face guide: where the face is in a small frame, from the agent's own detector (the
// one that decides at the door), so the page can say "come closer", "step back" or "move left" before
// the challenge starts. The page sends a downscaled frame a few times a second; nothing is kept.
import { isFaceEngineError, type FaceEngine } from '@portico/face-engine';
import { DoorError } from './door.js';

/** Frames larger than this are refused: the guide is meant for a small copy (320 px wide is plenty). */
export const GUIDE_FRAME_MAX_CHARS = 200_000;

export function createGuide(face: FaceEngine | null) {
  return {
    /** The primary face's box as fractions of the frame (0..1), or null when no face is found. */
    async box(frame: string) {
      if (!face) throw new DoorError(503, 'engine_unavailable', 'This device runs without a face engine');
      try {
        const probe = await face.probe(frame);
        const { width, height } = probe.image;
        const b = probe.face.box;
        const clip = (v: number) => Math.min(1, Math.max(0, v));
        const round = (v: number) => Math.round(v * 1000) / 1000;
        const x = clip(b.x / width);
        const y = clip(b.y / height);
        return {
          face: {
            x: round(x),
            y: round(y),
            width: round(clip((b.x + b.width) / width) - x),
            height: round(clip((b.y + b.height) / height) - y),
          },
        };
      } catch (error) {
        if (isFaceEngineError(error) && error.code === 'no_face_detected') return { face: null };
        if (isFaceEngineError(error)) throw new DoorError(422, error.code, error.message);
        throw error;
      }
    },
  };
}

export type Guide = ReturnType<typeof createGuide>;
