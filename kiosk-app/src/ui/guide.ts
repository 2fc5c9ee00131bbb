// What the live face guide asks the guest to fix, from where the agent's detector found the face in
// the camera picture (fractions of the picture, as the camera sees it: not mirrored). Directions are
// the guest's own: a face on the camera's left is on the guest's right, so they move to their left.
export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type Fix = 'noFace' | 'tooFar' | 'tooClose' | 'moveLeft' | 'moveRight' | 'moveUp' | 'moveDown';

/** A face narrower than this (of the picture's width) is too far for a good match; wider, too close. */
export const FACE_WIDTH = { min: 0.2, max: 0.6 };
/** How far the face's centre may be from the picture's centre (fraction of width, of height). */
export const CENTRE_TOLERANCE = { x: 0.12, y: 0.15 };

/** The one thing to fix first (distance, then centring), or null when the face is well placed. */
export function framingFix(face: FaceBox | null): Fix | null {
  if (!face) return 'noFace';
  if (face.width < FACE_WIDTH.min) return 'tooFar';
  if (face.width > FACE_WIDTH.max || face.height > 0.95) return 'tooClose';
  const dx = face.x + face.width / 2 - 0.5;
  const dy = face.y + face.height / 2 - 0.5;
  if (Math.abs(dx) > CENTRE_TOLERANCE.x) return dx < 0 ? 'moveLeft' : 'moveRight';
  if (Math.abs(dy) > CENTRE_TOLERANCE.y) return dy < 0 ? 'moveDown' : 'moveUp';
  return null;
}
