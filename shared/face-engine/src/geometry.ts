/** Face geometry: boxes, NMS, the 68->5 point reduction and the ArcFace similarity alignment. */
import type { Affine, Rect } from './raster.js';

export interface Point {
  readonly x: number;
  readonly y: number;
}

export type Box = Rect;

export function iou(p: Box, q: Box): number {
  const x1 = Math.max(p.x, q.x);
  const y1 = Math.max(p.y, q.y);
  const x2 = Math.min(p.x + p.width, q.x + q.width);
  const y2 = Math.min(p.y + p.height, q.y + q.height);
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = p.width * p.height + q.width * q.height - inter;
  return union > 0 ? inter / union : 0;
}

/** Greedy NMS over candidates sorted by descending score. */
export function nonMaxSuppression<T extends { box: Box; score: number }>(items: T[], threshold: number): T[] {
  const sorted = [...items].sort((p, q) => q.score - p.score);
  const kept: T[] = [];
  for (const item of sorted) {
    if (kept.every((k) => iou(k.box, item.box) < threshold)) kept.push(item);
  }
  return kept;
}

/** ArcFace 112x112 reference points: left eye, right eye, nose tip, left and right mouth corner. */
export const ARCFACE_TEMPLATE: readonly Point[] = [
  { x: 38.2946, y: 51.6963 },
  { x: 73.5318, y: 51.5014 },
  { x: 56.0252, y: 71.7366 },
  { x: 41.5493, y: 92.3655 },
  { x: 70.7299, y: 92.2041 },
];

function mean(points: readonly Point[], indices: readonly number[]): Point {
  let x = 0;
  let y = 0;
  for (const i of indices) {
    x += points[i]!.x;
    y += points[i]!.y;
  }
  return { x: x / indices.length, y: y / indices.length };
}

/**
 * 68 -> 5 points for the ArcFace template: eye centres from 4 lid points, mouth corners averaged
 * (outer and inner), and the nose as the mean of the nostril/base points 31-35. The reference JS
 * chain uses the nose tip (30) instead; on ../shared/faces the nostril mean (with the flip
 * average) widened the genuine/impostor gap from 0.026 to 0.053 and kept it wider on rescaled,
 * recompressed, padded and blurred copies of the set (README "Evaluation").
 */
export function fivePoints(landmarks68: readonly Point[]): Point[] {
  return [
    mean(landmarks68, [37, 38, 40, 41]),
    mean(landmarks68, [43, 44, 46, 47]),
    mean(landmarks68, [31, 32, 33, 34, 35]),
    mean(landmarks68, [48, 60]),
    mean(landmarks68, [54, 64]),
  ];
}

/**
 * Least-squares similarity (rotation, uniform scale, translation) taking `from` onto `to`
 * (Umeyama without reflection), returned as an Affine usable by sampleTensor.
 */
export function similarityTransform(from: readonly Point[], to: readonly Point[]): Affine {
  const n = from.length;
  let fx = 0;
  let fy = 0;
  let tx = 0;
  let ty = 0;
  for (let i = 0; i < n; i++) {
    fx += from[i]!.x;
    fy += from[i]!.y;
    tx += to[i]!.x;
    ty += to[i]!.y;
  }
  fx /= n;
  fy /= n;
  tx /= n;
  ty /= n;
  let dot = 0;
  let cross = 0;
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const u = from[i]!.x - fx;
    const v = from[i]!.y - fy;
    const x = to[i]!.x - tx;
    const y = to[i]!.y - ty;
    dot += u * x + v * y;
    cross += u * y - v * x;
    norm += u * u + v * v;
  }
  const a = dot / norm;
  const b = cross / norm;
  return [a, -b, tx - a * fx + b * fy, b, a, ty - b * fx - a * fy];
}
