import { readdirSync, readFileSync } from 'node:fs';
import { Analyzer } from '../src/analyzer.js';
import { DEFAULT_LIMITS } from '../src/decode.js';
import { loadVerifiedModels } from '../src/models/model-store.js';
import { cosineSimilarity } from '../src/embedding.js';
const a = await Analyzer.create(await loadVerifiedModels('/work/main/.models'), { limits: DEFAULT_LIMITS });
const items: { label: string; file: string; e: Float32Array }[] = [];
for (const g of ['johns', 'bbt']) for (const id of readdirSync(`/work/shared/faces/${g}`)) {
  if (id.includes('.')) continue;
  for (const f of readdirSync(`/work/shared/faces/${g}/${id}`)) {
    const file = `/work/shared/faces/${g}/${id}/${f}`;
    const r = await a.analyze(readFileSync(file));
    items.push({ label: id, file: `${id}/${f}`, e: r.embedding });
    if (process.env.V) console.log(`${id}/${f}`, r.image.width, JSON.stringify(r.face.box), r.face.score.toFixed(3), r.otherFaces.length, 'q', r.quality, JSON.stringify(r.qualityFactors), JSON.stringify(r.pose));
  }
}
const gen: [number, string, string][] = [], imp: [number, string, string][] = [];
for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
  const s = cosineSimilarity(items[i]!.e, items[j]!.e);
  (items[i]!.label === items[j]!.label ? gen : imp).push([s, items[i]!.file, items[j]!.file]);
}
gen.sort((x, y) => x[0] - y[0]); imp.sort((x, y) => y[0] - x[0]);
console.log('worst genuine', gen.slice(0, 6)); console.log('worst impostor', imp.slice(0, 6));
