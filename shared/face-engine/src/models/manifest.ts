/**
 * What each model file is and how it must be fed. Swapping a model means changing its entry here
 * (file, sha256, input description); the pipeline reads sizes and normalisation from this table.
 */

export interface ModelSource {
  /** npm package spec fetched with `npm pack` (never installed: its dependencies are huge). */
  readonly packageSpec: string;
  /** sha256 of the tarball `npm pack` downloads. */
  readonly tarballSha256: string;
}

export interface ModelInput {
  readonly width: number;
  readonly height: number;
  readonly colourOrder: 'RGB' | 'BGR' | 'GREY';
  /** Tensor value = (pixel - mean) / std, per channel in colourOrder. */
  readonly mean: readonly number[];
  readonly std: readonly number[];
}

export interface ModelEntry {
  readonly name: ModelName;
  readonly file: string;
  /** Path of the file inside the npm tarball. */
  readonly tarPath: string;
  readonly version: string;
  readonly sha256: string;
  readonly input: ModelInput;
  readonly role: string;
}

export type ModelName = 'detect' | 'landmark' | 'feature' | 'liveness' | 'eye' | 'pose';

export const MODEL_SOURCE: ModelSource = {
  packageSpec: 'faceplugin-face-recognition-js@0.0.1',
  tarballSha256: '7ea06031d9a3f83753254fcff60506a07b81b46fc84d4ee024cd041f260ec1ba',
};

const VERSION = '0.0.1';

export const MODELS: Readonly<Record<ModelName, ModelEntry>> = {
  detect: {
    name: 'detect',
    file: 'fr_detect.onnx',
    tarPath: 'package/model/fr_detect.onnx',
    version: VERSION,
    sha256: '6c0256ccd3164f844736a401faf936ec2930764a87ae39442180887d0c5c8854',
    input: { width: 320, height: 240, colourOrder: 'RGB', mean: [127, 127, 127], std: [128, 128, 128] },
    role: 'UltraFace RFB-320 face detector; outputs scores [N,2] and normalised corner boxes [N,4]',
  },
  landmark: {
    name: 'landmark',
    file: 'fr_landmark.onnx',
    tarPath: 'package/model/fr_landmark.onnx',
    version: VERSION,
    sha256: 'f10b0ba1d2a8a099adefede1ebf3733e44fe370715e7303dbeb7f59c02142258',
    input: { width: 64, height: 64, colourOrder: 'GREY', mean: [0], std: [256] },
    role: '68 landmarks, relative to the detector box',
  },
  feature: {
    name: 'feature',
    file: 'fr_feature.onnx',
    tarPath: 'package/model/fr_feature.onnx',
    version: VERSION,
    sha256: '87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581',
    input: { width: 112, height: 112, colourOrder: 'BGR', mean: [127, 127, 127], std: [128, 128, 128] },
    role: '512-d face embedding from a 5-point ArcFace-aligned crop',
  },
  liveness: {
    name: 'liveness',
    file: 'fr_liveness.onnx',
    tarPath: 'package/model/fr_liveness.onnx',
    version: VERSION,
    sha256: 'afa783b7e902fdfcf323a7240cac2a1c580c25314ea4161129dc1b0d100dc32d',
    input: { width: 128, height: 128, colourOrder: 'BGR', mean: [0, 0, 0], std: [1, 1, 1] },
    role: 'passive anti-spoof on the box enlarged 2.7x; softmax[0] = live',
  },
  eye: {
    name: 'eye',
    file: 'fr_eye.onnx',
    tarPath: 'package/model/fr_eye.onnx',
    version: VERSION,
    sha256: '1afcea006abc1ccac3c517022abde0aa092bed74ff3c9fe6878483ef9e6e38de',
    input: { width: 24, height: 24, colourOrder: 'GREY', mean: [0], std: [255] },
    role: 'eye open/closed on a square crop around each eye',
  },
  pose: {
    name: 'pose',
    file: 'fr_pose.onnx',
    tarPath: 'package/model/fr_pose.onnx',
    version: VERSION,
    sha256: '72d032ec941b7153bf8d3f2c03a4c165453cc7e63d479041ec7c6ef087e5839d',
    input: {
      width: 224,
      height: 224,
      colourOrder: 'RGB',
      mean: [123.675, 116.28, 103.53],
      std: [58.395, 57.12, 57.375],
    },
    role: 'head pose (yaw, pitch, roll) as 66 bins of 3 degrees each',
  },
};

const FEATURE_ID = `faceplugin-fr_feature@${VERSION}+${MODELS.feature.sha256.slice(0, 8)}+nose31-35`;

/**
 * Embeddings from different models are not comparable, so every embedding carries its model's id.
 * The suffix names the chain's alignment (nose from landmarks 31-35) and test-time flip. This is the
 * default embedder: the sum of the aligned crop's and its mirror's embeddings.
 */
export const EMBEDDING_MODEL_ID = `${FEATURE_ID}+flip`;

/**
 * Every embedder the engine computes for each face (FaceProbe.embeddings), so that a service can
 * switch its templates from one to another without asking people to enroll again: stored photos are
 * re-embedded with the new one while the old one keeps serving. Today both come from the same
 * model runs: the default (with the mirror) and the aligned crop alone (less accurate, see README).
 */
export const EMBEDDER_IDS = [EMBEDDING_MODEL_ID, `${FEATURE_ID}+noflip`] as const;

/** Registry photos used as self-contained test fixtures (group photos, several faces each). */
export const FIXTURE_SOURCE: ModelSource = {
  packageSpec: '@vladmandic/face-api@1.7.15',
  tarballSha256: '0d77fffeef362ef9c0939cf6c567f3a2e8e177f114fa257a3270cbd2e509b031',
};

export const FIXTURES: ReadonlyArray<{ file: string; tarPath: string; sha256: string }> = [
  ['sample1.jpg', '8ecae4b267b2d3169e06e00c7dee97097aa2a94635d45216f7732a5f4943cb51'],
  ['sample2.jpg', '7d2b60ae6f13bf30f422e04df87451081a02c83de469056f25afb44b7000c691'],
  ['sample3.jpg', '8eb081c9efb14370fa94d9feab9e5fbeafd19a627491853a80c2bf67f7ffa936'],
  ['sample4.jpg', '729efa5923061d40eb4ed5f267a18cc7b8ba6f852bb2757b16d8b7e4937476fc'],
  ['sample5.jpg', '6d45095ebb182d8f975c0790e0e4eefd86fbb40609cf4b271776d92e12662938'],
  ['sample6.jpg', '9baad80f9d5e306fb9b8c0913d44445f1e95848df317530efb03d0934c57ba87'],
].map(([file, sha256]) => ({ file: file!, tarPath: `package/demo/${file!}`, sha256: sha256! }));
