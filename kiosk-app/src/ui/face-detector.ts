// The live face guide's detector in the page: MediaPipe's FaceDetector (BlazeFace short range, on the
// CPU) on the camera's own frames, so a hint costs no round trip to the agent. Its files come from the
// kiosk server's `/vision/` (scripts/face-detector-model.ts). It only guides: the agent's detector
// still decides at the door.
import { FaceDetector } from '@mediapipe/tasks-vision';
import type { FaceBox } from './guide.js';

export interface InPageDetector {
  /**
   * The primary (largest) face in the video's current frame, as fractions of the frame as the camera
   * sees it (not mirrored); null when there is no face, or no frame yet. Timestamps need not be
   * strictly increasing (MediaPipe needs them so; the detector keeps its own clock moving).
   */
  detect(video: HTMLVideoElement, timestampMs: number): FaceBox | null;
  close(): void;
}

/**
 * The detector, or null when it cannot load (a browser without WebAssembly SIMD, the files missing):
 * the caller then asks the agent (`POST /agent/face-box`).
 */
export async function loadFaceDetector(base = '/vision/'): Promise<InPageDetector | null> {
  let detector: FaceDetector;
  try {
    detector = await FaceDetector.createFromOptions(
      {
        wasmLoaderPath: `${base}vision_wasm_internal.js`,
        wasmBinaryPath: `${base}vision_wasm_internal.wasm`,
      },
      {
        baseOptions: { modelAssetPath: `${base}face_detector.tflite`, delegate: 'CPU' },
        runningMode: 'VIDEO',
        minDetectionConfidence: 0.5,
      },
    );
  } catch {
    return null;
  }
  let last = -Infinity;
  return {
    detect(video, timestampMs) {
      const width = video.videoWidth;
      const height = video.videoHeight;
      if (!width || !height || video.readyState < HTMLMediaElement.HAVE_CURRENT_DATA) return null;
      last = Math.max(timestampMs, last + 1);
      let primary: FaceBox | null = null;
      for (const { boundingBox: box } of detector.detectForVideo(video, last).detections) {
        if (!box) continue;
        const x = clip(box.originX / width);
        const y = clip(box.originY / height);
        const face = {
          x,
          y,
          width: clip((box.originX + box.width) / width) - x,
          height: clip((box.originY + box.height) / height) - y,
        };
        if (!primary || face.width * face.height > primary.width * primary.height) primary = face;
      }
      return primary;
    },
    close: () => detector.close(),
  };
}

const clip = (v: number) => Math.min(1, Math.max(0, v));
