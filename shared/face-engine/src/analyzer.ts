/**
 * The whole per-frame chain on one thread: decode -> detect -> landmarks -> align -> embed ->
 * quality (-> liveness). Runs inside a pool worker; kept free of worker plumbing so it can be
 * measured and tested directly.
 */
import * as ort from 'onnxruntime-node';
import { decodeFrame, type DecodeLimits } from './decode.js';
import { FaceEngineError } from './errors.js';
import {
  ARCFACE_TEMPLATE,
  fivePoints,
  nonMaxSuppression,
  similarityTransform,
  type Box,
  type Point,
} from './geometry.js';
import { EMBEDDER_IDS, EMBEDDING_MODEL_ID, MODELS, type ModelName } from './models/manifest.js';
import { combineQuality, qualityFactors } from './quality.js';
import {
  letterboxTensor,
  lumaFromTensor,
  rectAffine,
  resizeRaster,
  sampleTensor,
  type Affine,
  type Raster,
  type Rect,
} from './raster.js';
import type {
  AnalyzeOptions,
  DetectedFace,
  EyeState,
  FaceAnalysis,
  FaceProbe,
  HeadPose,
  LivenessSignals,
  ProbeTimings,
  QualityFactors,
  ProbeOptions,
} from './types.js';

/**
 * Runs a model on a prepared input in another worker process, when one is idle: resolves with the model's
 * output, or with null when nobody is free (the caller then runs it itself).
 */
export type ModelOffload = (model: OffloadableModel, input: Float32Array) => Promise<Float32Array | null>;
export type OffloadableModel = 'feature';

export interface AnalyzerOptions {
  readonly limits: DecodeLimits;
  /** Lends the mirrored embedding of a frame to an idle pool worker (see WorkerPool). */
  readonly offload?: ModelOffload;
}

/** Detector confidence below which a candidate is dropped. */
const MIN_DETECTION_SCORE = 0.6;
const NMS_IOU = 0.4;
/** A face taller than this fraction of the image counts as a close-up (see detect). */
const CLOSE_UP_FRACTION = 0.6;

type Sessions = Record<ModelName, ort.InferenceSession>;

function softmax(values: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i]!);
  const exps = Array.from({ length: values.length }, (_, i) => Math.exp(values[i]! - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((v) => v / sum);
}

function l2normalise(values: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(values);
  let sum = 0;
  for (const v of out) sum += v * v;
  const inv = 1 / Math.sqrt(sum || 1);
  for (let i = 0; i < out.length; i++) out[i]! *= inv;
  return out;
}

/** The reference crop of the liveness model: box scaled about its centre, shifted inside. */
function scaledCropInside(box: Box, scale: number, width: number, height: number): Rect {
  const s = Math.min((height - 1) / box.height, (width - 1) / box.width, scale);
  const w = box.width * s;
  const h = box.height * s;
  const x = Math.min(Math.max(box.x + box.width / 2 - w / 2, 0), width - 1 - w);
  const y = Math.min(Math.max(box.y + box.height / 2 - h / 2, 0), height - 1 - h);
  return { x: Math.max(x, 0), y: Math.max(y, 0), width: w, height: h };
}

/** The same crop mirrored left-right: output column u samples what column (width - u) sampled. */
function flipAffine(m: Affine, width: number): Affine {
  return [-m[0], m[1], m[0] * width + m[2], -m[3], m[4], m[3] * width + m[5]];
}

function tensor(data: Float32Array, width: number, height: number, channels: number): ort.Tensor {
  return new ort.Tensor('float32', data, [1, channels, height, width]);
}

export class Analyzer {
  private constructor(
    private readonly sessions: Sessions,
    private readonly options: AnalyzerOptions,
  ) {}

  static async create(models: Record<ModelName, Uint8Array>, options: AnalyzerOptions): Promise<Analyzer> {
    const sessions: Partial<Sessions> = {};
    for (const name of Object.keys(MODELS) as ModelName[]) {
      sessions[name] = await ort.InferenceSession.create(models[name], {
        executionProviders: ['cpu'],
        // One thread per session: parallelism comes from the worker pool, not from ORT.
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        // Without flush-to-zero the embedder runs 7-8x slower on denormal activations.
        extra: { session: { set_denormal_as_zero: '1' } },
      });
    }
    return new Analyzer(sessions as Sessions, options);
  }

  async release(): Promise<void> {
    await Promise.all(Object.values(this.sessions).map((s) => s.release()));
  }

  /** Runs a model lent by another worker on an input prepared for it and returns its `output`. */
  async runModel(name: OffloadableModel, input: Float32Array): Promise<Float32Array> {
    const { width, height } = MODELS[name].input;
    return (await this.run(name, tensor(input, width, height, 3)))['output']!.data as Float32Array;
  }

  private async run(name: ModelName, input: ort.Tensor): Promise<ort.InferenceSession.OnnxValueMapType> {
    const session = this.sessions[name];
    return session.run({ [session.inputNames[0]!]: input });
  }

  /**
   * Finds faces in the raster, letterboxed into the 4:3 detector input. The detector was trained on
   * whole scenes: on a close-up (a face filling the frame, as in tight ID-style crops) its box and
   * hence the landmarks are poor, so close-ups are detected again with the image shrunk to half the
   * canvas, and that result is used when it finds a face.
   */
  async detect(raster: Raster): Promise<DetectedFace[]> {
    const faces = await this.detectAt(raster, 1);
    const closeUp = faces.some((f) => f.box.height > CLOSE_UP_FRACTION * raster.height);
    if (faces.length > 0 && !closeUp) return faces;
    const padded = await this.detectAt(raster, 0.5);
    return padded.length > 0 ? padded : faces;
  }

  private async detectAt(raster: Raster, shrink: number): Promise<DetectedFace[]> {
    const { width: W, height: H } = MODELS.detect.input;
    const scale = Math.min(W / raster.width, H / raster.height) * shrink;
    const w = Math.max(1, Math.round(raster.width * scale));
    const h = Math.max(1, Math.round(raster.height * scale));
    const ox = Math.floor((W - w) / 2);
    const oy = Math.floor((H - h) / 2);
    const small = await resizeRaster(raster, w, h);
    const input = letterboxTensor(small, W, H, ox, oy, MODELS.detect.input);
    const sx = w / raster.width;
    const sy = h / raster.height;
    const out = await this.run('detect', tensor(input, W, H, 3));
    const scores = out['scores']!.data as Float32Array;
    const boxes = out['boxes']!.data as Float32Array;
    const candidates: DetectedFace[] = [];
    for (let i = 0; i < scores.length / 2; i++) {
      const score = scores[i * 2 + 1]!;
      if (score < MIN_DETECTION_SCORE) continue;
      // Boxes may extend past the image: they are kept as predicted, the landmark crop needs that.
      const x1 = (boxes[i * 4]! * W - ox) / sx;
      const y1 = (boxes[i * 4 + 1]! * H - oy) / sy;
      const x2 = (boxes[i * 4 + 2]! * W - ox) / sx;
      const y2 = (boxes[i * 4 + 3]! * H - oy) / sy;
      if (x2 - x1 < 4 || y2 - y1 < 4) continue;
      candidates.push({ box: { x: x1, y: y1, width: x2 - x1, height: y2 - y1 }, score });
    }
    return nonMaxSuppression(candidates, NMS_IOU);
  }

  async landmarks(raster: Raster, box: Box): Promise<Point[]> {
    const { width, height } = MODELS.landmark.input;
    // The landmark model was trained on detector boxes: keep the box even where it leaves the image.
    const input = sampleTensor(raster, rectAffine(box, width, height), width, height, MODELS.landmark.input, {
      supersample: Math.min(4, Math.ceil(box.width / width)),
    });
    const out = (await this.run('landmark', tensor(input, width, height, 1)))['output']!.data as Float32Array;
    const points: Point[] = [];
    for (let i = 0; i < 68; i++) {
      points.push({ x: box.x + out[i * 2]! * box.width, y: box.y + out[i * 2 + 1]! * box.height });
    }
    return points;
  }

  async eyes(raster: Raster, lm: readonly Point[]): Promise<EyeState> {
    const { width, height } = MODELS.eye.input;
    const openScore = async (lids: number[], corner0: number, corner1: number): Promise<number> => {
      let cx = 0;
      let cy = 0;
      for (const i of lids) {
        cx += lm[i]!.x / lids.length;
        cy += lm[i]!.y / lids.length;
      }
      const size = Math.max(Math.abs(lm[corner1]!.x - lm[corner0]!.x) * 1.6, 4);
      const rect = { x: cx - size / 2, y: cy - size / 2, width: size, height: size };
      const input = sampleTensor(raster, rectAffine(rect, width, height), width, height, MODELS.eye.input, {
        supersample: Math.min(4, Math.ceil(size / width)),
      });
      const out = (await this.run('eye', tensor(input, width, height, 1)))['output']!.data as Float32Array;
      return softmax(out)[EYE_OPEN_CLASS]!;
    };
    const left = await openScore([37, 38, 40, 41], 36, 39);
    const right = await openScore([43, 44, 46, 47], 42, 45);
    return { leftOpen: left >= 0.5, rightOpen: right >= 0.5, leftOpenScore: left, rightOpenScore: right };
  }

  async pose(raster: Raster, box: Box): Promise<HeadPose> {
    const { width, height } = MODELS.pose.input;
    const rect = {
      x: box.x - box.width / 4,
      y: box.y - box.height / 4,
      width: box.width * 1.5,
      height: box.height * 1.5,
    };
    const input = sampleTensor(raster, rectAffine(rect, width, height), width, height, MODELS.pose.input, {
      supersample: Math.min(4, Math.ceil(rect.width / width)),
    });
    const session = this.sessions.pose;
    const out = await this.run('pose', tensor(input, width, height, 3));
    // Three heads of 66 bins, 3 degrees each, starting at -99: the angle is the softmax expectation.
    const angle = (name: string): number =>
      softmax(out[name]!.data as Float32Array).reduce((acc, p, i) => acc + p * i, 0) * 3 - 99;
    const [yaw, pitch, roll] = session.outputNames.map(angle);
    return { yaw: yaw!, pitch: pitch!, roll: roll! };
  }

  async liveness(raster: Raster, box: Box): Promise<number> {
    const { width, height } = MODELS.liveness.input;
    const rect = scaledCropInside(box, 2.7, raster.width, raster.height);
    const input = sampleTensor(
      raster,
      rectAffine(rect, width, height),
      width,
      height,
      MODELS.liveness.input,
      {
        supersample: Math.min(4, Math.ceil(rect.width / width)),
      },
    );
    const out = (await this.run('liveness', tensor(input, width, height, 3)))['output']!.data as Float32Array;
    return softmax(out)[0]!;
  }

  /**
   * Decode -> detect -> landmarks -> align -> embed: what every analysis needs, with the primary
   * face and the other faces in original-image pixels.
   */
  private async embedPrimary(frame: string | Uint8Array): Promise<EmbeddedFace> {
    const t0 = performance.now();
    const decoded = await decodeFrame(frame, this.options.limits);
    const raster: Raster = { data: decoded.rgb, width: decoded.rgbWidth, height: decoded.rgbHeight };
    const t1 = performance.now();

    const faces = await this.detect(raster);
    if (faces.length === 0) throw new FaceEngineError('no_face_detected', 'no face found in the frame');
    const primaryIndex = pickPrimary(faces, raster.width, raster.height);
    const primary = faces[primaryIndex]!;
    const t2 = performance.now();

    const lm68 = await this.landmarks(raster, primary.box);
    const five = fivePoints(lm68);
    const t3 = performance.now();

    const { width: FW, height: FH } = MODELS.feature.input;
    const toImage = similarityTransform(ARCFACE_TEMPLATE, five);
    const supersample = Math.min(4, Math.ceil(Math.hypot(toImage[0], toImage[3])));
    const aligned = sampleTensor(raster, toImage, FW, FH, MODELS.feature.input, { supersample });
    const t4 = performance.now();

    // Test-time flip: the L2-normalised sum of the crop's and its mirror's embeddings (part of the
    // model id: templates made without it are not comparable). The mirror runs on another worker
    // when one is idle, so a lone frame uses two cores.
    const flipped = sampleTensor(raster, flipAffine(toImage, FW), FW, FH, MODELS.feature.input, {
      supersample,
    });
    const lent = this.options.offload?.('feature', flipped);
    const features = await this.runModel('feature', aligned);
    const mirrored = (await lent) ?? (await this.runModel('feature', flipped));
    const plain = l2normalise(features);
    const second = l2normalise(mirrored);
    const embedding = l2normalise(plain.map((v, i) => v + second[i]!));
    const t5 = performance.now();

    const k = decoded.scale;
    // Reported boxes are clipped to the image; internally the detector's unclipped box is used.
    const toOriginal = (f: DetectedFace): DetectedFace => {
      const x1 = Math.max(f.box.x, 0) * k;
      const y1 = Math.max(f.box.y, 0) * k;
      const x2 = Math.min(f.box.x + f.box.width, raster.width) * k;
      const y2 = Math.min(f.box.y + f.box.height, raster.height) * k;
      return { box: { x: x1, y: y1, width: x2 - x1, height: y2 - y1 }, score: f.score };
    };
    const scalePoint = (p: Point): Point => ({ x: p.x * k, y: p.y * k });
    return {
      raster,
      primary,
      lm68,
      aligned,
      interocular: Math.hypot(five[1]!.x - five[0]!.x, five[1]!.y - five[0]!.y) * k,
      started: t0,
      result: {
        image: { width: decoded.width, height: decoded.height, format: decoded.format },
        face: { ...toOriginal(primary), landmarks: five.map(scalePoint), landmarks68: lm68.map(scalePoint) },
        otherFaces: faces.filter((_, i) => i !== primaryIndex).map(toOriginal),
        embedding,
        modelId: EMBEDDING_MODEL_ID,
        embeddings: { [EMBEDDER_IDS[0]]: embedding, [EMBEDDER_IDS[1]]: plain },
        timings: {
          decode: t1 - t0,
          detect: t2 - t1,
          landmarks: t3 - t2,
          align: t4 - t3,
          embed: t5 - t4,
          total: t5 - t0,
        },
      },
    };
  }

  /** Everything: the embedding, quality (with head pose) and, if asked, the liveness signals (enrollment). */
  async analyze(frame: string | Uint8Array, options: AnalyzeOptions = {}): Promise<FaceAnalysis> {
    const embedded = await this.embedPrimary(frame);
    const { raster, primary, lm68, started, result } = embedded;
    const t5 = performance.now();
    const { pose, factors } = await this.qualityOf(embedded);
    const t6 = performance.now();

    let liveness: LivenessSignals | undefined;
    if (options.liveness) {
      const score = await this.liveness(raster, primary.box);
      liveness = { score, eyes: await this.eyes(raster, lm68), pose };
    }
    const t7 = performance.now();
    return {
      ...result,
      quality: combineQuality(factors),
      qualityFactors: factors,
      pose,
      ...(liveness ? { liveness } : {}),
      timings: {
        ...result.timings,
        quality: t6 - t5,
        ...(liveness ? { liveness: t7 - t6 } : {}),
        total: t7 - started,
      },
    };
  }

  /**
   * What identification needs: the embedding, the probe's quality (a probe too poor to judge is sent
   * back to the camera) and, if asked, the passive liveness score. Skips the eye models.
   */
  async probe(frame: string | Uint8Array, options: ProbeOptions = {}): Promise<FaceProbe> {
    const embedded = await this.embedPrimary(frame);
    const { raster, primary, started, result } = embedded;
    const t5 = performance.now();
    const { factors } = await this.qualityOf(embedded);
    const t6 = performance.now();
    const quality = { quality: combineQuality(factors), qualityFactors: factors };
    if (!options.liveness) {
      return { ...result, ...quality, timings: { ...result.timings, quality: t6 - t5, total: t6 - started } };
    }
    const score = await this.liveness(raster, primary.box);
    const t7 = performance.now();
    return {
      ...result,
      ...quality,
      liveness: { score },
      timings: { ...result.timings, quality: t6 - t5, liveness: t7 - t6, total: t7 - started },
    };
  }

  private async qualityOf(embedded: EmbeddedFace): Promise<{ pose: HeadPose; factors: QualityFactors }> {
    const pose = await this.pose(embedded.raster, embedded.primary.box);
    const { width: FW, height: FH } = MODELS.feature.input;
    const factors = qualityFactors({
      alignedLuma: lumaFromTensor(embedded.aligned, FW * FH, MODELS.feature.input),
      detectorScore: embedded.primary.score,
      interocular: embedded.interocular,
      pose,
    });
    return { pose, factors };
  }
}

interface EmbeddedFace {
  readonly raster: Raster;
  /** The primary face in raster pixels, as detected (unclipped). */
  readonly primary: DetectedFace;
  readonly lm68: readonly Point[];
  readonly aligned: Float32Array;
  /** Distance between the eye centres, original pixels. */
  readonly interocular: number;
  readonly started: number;
  readonly result: Omit<FaceProbe, 'liveness' | 'quality' | 'qualityFactors' | 'timings'> & {
    readonly timings: Omit<ProbeTimings, 'quality'>;
  };
}

/** Output class of fr_eye that means "open" (checked on open-eyed and closed-eyed real photos). */
const EYE_OPEN_CLASS = 1;

/**
 * The primary face is the most prominent: area weighted by closeness to the image centre, so a
 * large face at the edge can lose to a slightly smaller one in the middle of the frame.
 */
export function pickPrimary(faces: readonly DetectedFace[], width: number, height: number): number {
  let best = 0;
  let bestValue = -Infinity;
  const halfDiagonal = Math.hypot(width, height) / 2;
  faces.forEach((f, i) => {
    const cx = f.box.x + f.box.width / 2;
    const cy = f.box.y + f.box.height / 2;
    const offCentre = Math.hypot(cx - width / 2, cy - height / 2) / halfDiagonal;
    const value = f.box.width * f.box.height * (1 - 0.5 * offCentre);
    if (value > bestValue) {
      bestValue = value;
      best = i;
    }
  });
  return best;
}
