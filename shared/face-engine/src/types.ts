/** Public result types of the engine. Coordinates are pixels of the image after EXIF orientation. */
import type { Point } from './geometry.js';

export type { Point } from './geometry.js';

export interface FaceBox {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface DetectedFace {
  readonly box: FaceBox;
  /** Detector confidence in [0, 1]. */
  readonly score: number;
}

export interface PrimaryFace extends DetectedFace {
  /** Left eye, right eye (as seen in the image), nose tip, left and right mouth corner. */
  readonly landmarks: readonly Point[];
  /** The 68-point iBUG layout the 5 points are derived from. */
  readonly landmarks68: readonly Point[];
}

/** Each factor is in [0, 1]; see README "Quality" for how they combine. */
export interface QualityFactors {
  readonly detector: number;
  readonly size: number;
  readonly sharpness: number;
  readonly exposure: number;
  readonly pose: number;
}

export interface HeadPose {
  /** Degrees. Sign convention of the pose model: positive yaw = head turned to the image's left. */
  readonly yaw: number;
  readonly pitch: number;
  readonly roll: number;
}

export interface EyeState {
  readonly leftOpen: boolean;
  readonly rightOpen: boolean;
  /** Probability the eye is open, in [0, 1]. */
  readonly leftOpenScore: number;
  readonly rightOpenScore: number;
}

export interface LivenessSignals {
  /** Passive anti-spoof probability that the face is live, in [0, 1]. */
  readonly score: number;
  readonly eyes: EyeState;
  readonly pose: HeadPose;
}

/** Milliseconds spent in each stage inside the worker. */
export interface ProbeTimings {
  readonly decode: number;
  readonly detect: number;
  readonly landmarks: number;
  readonly align: number;
  readonly embed: number;
  readonly quality: number;
  readonly liveness?: number;
  readonly total: number;
}

export type StageTimings = ProbeTimings;

/** What identification needs (`FaceEngine.probe`): the primary face and its embedding. */
export interface FaceProbe {
  readonly image: { readonly width: number; readonly height: number; readonly format: 'jpeg' | 'png' };
  readonly face: PrimaryFace;
  readonly otherFaces: readonly DetectedFace[];
  /** 512-d, L2-normalised; only comparable with embeddings of the same `modelId`. */
  readonly embedding: Float32Array;
  readonly modelId: string;
  /** The face's embedding by every embedder of the engine (EMBEDDER_IDS), `embedding` among them. */
  readonly embeddings: Readonly<Record<string, Float32Array>>;
  /** Face quality in [0, 1] (see README "Quality"); a probe below the tenant's floor is retaken. */
  readonly quality: number;
  readonly qualityFactors: QualityFactors;
  /** The passive anti-spoof score, when asked for. */
  readonly liveness?: { readonly score: number };
  readonly timings: ProbeTimings;
}

/** Everything about the primary face (`FaceEngine.analyze`, used for enrollment). */
export interface FaceAnalysis extends FaceProbe {
  readonly pose: HeadPose;
  readonly liveness?: LivenessSignals;
  readonly timings: StageTimings;
}

export interface AnalyzeOptions {
  /** Also the passive liveness score, eye state and head pose (for a challenge). */
  readonly liveness?: boolean;
}

export interface ProbeOptions {
  /** Also the passive liveness score. */
  readonly liveness?: boolean;
}
