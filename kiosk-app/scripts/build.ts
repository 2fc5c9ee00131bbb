// `pnpm --filter @portico/kiosk build`: the JavaScript an Electron package needs, in dist/ (not in
// git). The workspace packages otherwise run through the tsx loader; here esbuild bundles them:
//   dist/agent/main.mjs          the device agent (contract, checkin-policy, face-engine, RxDB inside;
//                                onnxruntime-node and sharp stay external: native, from node_modules)
//   dist/agent/worker-entry.mjs  the face engine's worker (the pool forks it beside the agent)
//   dist/agent/search/           the face index's WebAssembly kernel
//   dist/shell/main.mjs          Electron's main process with the kiosk server (electron external)
//   dist/shell/policy.mjs        the shell's decisions on their own (tests load them)
//   dist/shell/preload.cjs       the preload
//   dist/shell/ui/               the page: index.html, style.css and app.js, bundled once here
//   dist/shell/ui/vision/        the in-page face detector's model (with its metadata) and WebAssembly
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { bundleUi } from '../src/server.js';
import { visionAssets } from './face-detector-model.js';

const at = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const DIST = at('../dist/');

/** Bundled CommonJS dependencies use `require` (Node's built-ins) and `__dirname`: give the ES module both. */
const node: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  banner: {
    js: [
      "import { createRequire as __cr } from 'node:module';",
      "import { dirname as __dn } from 'node:path';",
      "import { fileURLToPath as __fu } from 'node:url';",
      'const require = __cr(import.meta.url);',
      'const __filename = __fu(import.meta.url);',
      'const __dirname = __dn(__filename);',
    ].join(' '),
  },
  logLevel: 'warning',
};

export async function buildKiosk() {
  await rm(DIST, { recursive: true, force: true });
  await build({
    ...node,
    entryPoints: {
      main: at('../../device-agent/src/main.ts'),
      'worker-entry': at('../../shared/face-engine/src/worker.ts'),
    },
    outdir: `${DIST}agent`,
    external: ['onnxruntime-node', 'sharp'],
  });
  // The face index reads its WebAssembly search kernel beside its module (new URL(…, import.meta.url)).
  await mkdir(`${DIST}agent/search`, { recursive: true });
  await copyFile(at('../../shared/face-engine/src/search/scan-i8.wasm'), `${DIST}agent/search/scan-i8.wasm`);
  await build({
    ...node,
    entryPoints: { main: at('../src/shell/main.ts'), policy: at('../src/shell/policy.ts') },
    outdir: `${DIST}shell`,
    external: ['electron', 'esbuild'],
  });
  await mkdir(`${DIST}shell/ui`, { recursive: true });
  await copyFile(at('../src/shell/preload.cjs'), `${DIST}shell/preload.cjs`);
  for (const f of ['index.html', 'style.css']) await copyFile(at(`../src/ui/${f}`), `${DIST}shell/ui/${f}`);
  await writeFile(`${DIST}shell/ui/app.js`, await bundleUi());
  await mkdir(`${DIST}shell/ui/vision`, { recursive: true });
  for (const [name, file] of Object.entries(await visionAssets())) {
    await copyFile(file, `${DIST}shell/ui/vision/${name}`);
  }
  return DIST;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`built ${await buildKiosk()}`);
}
