import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { Analyzer } from '../src/analyzer.js';
import { DEFAULT_LIMITS } from '../src/decode.js';
import { loadVerifiedModels } from '../src/models/model-store.js';
const a = await Analyzer.create(await loadVerifiedModels('/work/main/.models'), { limits: DEFAULT_LIMITS });
const q = async (b: Buffer) => { try { const r = await a.analyze(b); return `${r.quality.toFixed(3)} ${Object.values(r.qualityFactors).map((x) => x.toFixed(2)).join('/')} y${r.pose.yaw.toFixed(0)} r${r.pose.roll.toFixed(0)}`; } catch (e) { return (e as any).code; } };
for (const f of process.argv.slice(2)) {
  const img = sharp(readFileSync(f)).rotate();
  const { width = 0, height = 0 } = await img.metadata();
  const clean = await img.clone().png().toBuffer();
  console.log(f.split('/').slice(-2).join('/'));
  console.log('  clean  ', await q(clean));
  console.log('  blur2  ', await q(await img.clone().blur(2).png().toBuffer()));
  console.log('  blur4  ', await q(await img.clone().blur(4).png().toBuffer()));
  console.log('  dark   ', await q(await img.clone().linear(0.2, 0).png().toBuffer()));
  console.log('  shrunk ', await q(await img.clone().resize(Math.round(width / 4)).png().toBuffer()));
  console.log('  squeeze', await q(await img.clone().resize(Math.round(width * 0.45), height, { fit: 'fill' }).png().toBuffer()));
  console.log('  rot40  ', await q(await img.clone().rotate(40, { background: '#000' }).png().toBuffer()));
}
