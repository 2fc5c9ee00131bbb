// The face guide's rule (src/ui/guide.ts) on boxes like the agent's detector answers: one fix at a time,
// distance first, directions the guest's own (the camera's left is the guest's right).
import { describe, expect, it } from 'vitest';
import { framingFix } from '../src/ui/guide.js';

const centred = (width: number, height = width * 1.4) => ({
  x: 0.5 - width / 2,
  y: 0.5 - height / 2,
  width,
  height,
});

describe('framingFix', () => {
  it('asks for a face, then for the distance, then for centring, and is quiet when all is right', () => {
    expect(framingFix(null)).toBe('noFace');
    expect(framingFix(centred(0.13))).toBe('tooFar');
    expect(framingFix(centred(0.7, 0.9))).toBe('tooClose');
    expect(framingFix({ x: 0.3, y: 0.02, width: 0.4, height: 0.97 })).toBe('tooClose');
    expect(framingFix(centred(0.37, 0.68))).toBeNull();
    // Too far and off-centre: the distance comes first.
    expect(framingFix({ x: 0.02, y: 0.4, width: 0.1, height: 0.15 })).toBe('tooFar');
  });

  it("says where to move in the guest's own directions", () => {
    // Face on the camera's left (x small): the guest stands to their right, so "move to your left".
    expect(framingFix({ x: 0.06, y: 0.39, width: 0.3, height: 0.45 })).toBe('moveLeft');
    expect(framingFix({ x: 0.64, y: 0.3, width: 0.3, height: 0.45 })).toBe('moveRight');
    // Face high in the picture: lower it; low: raise it.
    expect(framingFix({ x: 0.35, y: 0.0, width: 0.3, height: 0.4 })).toBe('moveDown');
    expect(framingFix({ x: 0.35, y: 0.55, width: 0.3, height: 0.45 })).toBe('moveUp');
    // Within the tolerance: nothing to fix.
    expect(framingFix({ x: 0.42, y: 0.3, width: 0.3, height: 0.45 })).toBeNull();
  });
});
