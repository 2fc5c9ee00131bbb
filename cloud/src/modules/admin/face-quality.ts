// A photo's face quality before it is saved as an enrollment: the same analysis and threshold as
// enrollment, nothing stored, nothing biometric logged or returned (no embedding, no image).
import type { AdminFaceQuality } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { getTenantSettings } from '../tenants/service.js';

/** A quality factor under this is named as something to fix. */
const WEAK_FACTOR = 0.5;

const FACTOR_ISSUES = {
  detector: 'low_confidence',
  size: 'face_too_small',
  sharpness: 'blurry',
  exposure: 'poor_exposure',
  pose: 'not_frontal',
} as const;

export function createFaceQualityCheck(deps: Pick<AppDeps, 'db' | 'face'>) {
  return async function faceQuality(tenantId: string, image: string): Promise<AdminFaceQuality> {
    const { biometricQualityLevel: threshold } = await getTenantSettings(deps.db, tenantId);
    let analysis;
    try {
      analysis = await deps.face.analyze(image);
    } catch (error) {
      if (error instanceof AppError && error.code === 'no_face_detected') {
        return {
          faceDetected: false,
          quality: null,
          threshold,
          acceptable: false,
          issues: ['no_face'],
          factors: null,
        };
      }
      throw error;
    }
    const factors = { ...analysis.qualityFactors };
    const issues: AdminFaceQuality['issues'] = [];
    if (analysis.otherFaces.length > 0) issues.push('several_faces');
    for (const [factor, issue] of Object.entries(FACTOR_ISSUES)) {
      if (factors[factor as keyof typeof factors] < WEAK_FACTOR) issues.push(issue);
    }
    const acceptable = analysis.quality >= threshold;
    if (!acceptable) issues.push('below_threshold');
    const round = (n: number) => Math.round(n * 1e4) / 1e4;
    return {
      faceDetected: true,
      quality: analysis.quality,
      threshold,
      acceptable,
      issues,
      factors: {
        detector: round(factors.detector),
        size: round(factors.size),
        sharpness: round(factors.sharpness),
        exposure: round(factors.exposure),
        pose: round(factors.pose),
      },
    };
  };
}
