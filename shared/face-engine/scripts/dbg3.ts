import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { Analyzer } from '../src/analyzer.js';
import { DEFAULT_LIMITS } from '../src/decode.js';
import { loadVerifiedModels } from '../src/models/model-store.js';
const a = await Analyzer.create(await loadVerifiedModels('/work/main/.models'), { limits: DEFAULT_LIMITS });
for (const f of process.argv.slice(2)) {
  const buf = readFileSync(f);
  const r = await a.analyze(buf, { liveness: true });
  const all = [r.face, ...r.otherFaces];
  console.log(f, r.image, 'faces', all.length);
  console.log(' primary', JSON.stringify(r.face.box), 'q', r.quality, JSON.stringify(r.qualityFactors));
  console.log(' pose', JSON.stringify(r.pose), 'live', r.liveness?.score.toFixed(3), 'eyes', r.liveness?.eyes.leftOpenScore.toExponential(2), r.liveness?.eyes.rightOpenScore.toExponential(2));
  const b = r.face.box;
  await sharp(buf).rotate().extract({ left: Math.round(b.x), top: Math.round(b.y), width: Math.round(b.width), height: Math.round(b.height) }).toFile('/tmp/primary.png');
}
