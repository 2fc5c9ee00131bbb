// Builds what the package ships (run by `pnpm pack` through `prepack`): dist/esm (ES modules) and
// dist/cjs (CommonJS), each with .d.ts. Inside the workspace the package is used from src/ directly.
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

await rm(path.join(root, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.build-cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', path.join(root, config)], { stdio: 'inherit' });
}
// The package is `type: module`; this marks the CommonJS copy as such for Node and TypeScript.
await writeFile(path.join(root, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
console.log('built dist/esm and dist/cjs');
