// The release workflow's dry run, as CI runs it: both SDKs packed and checked publishable, one version,
// nothing bumped on disk; and the checks refuse what must not be published.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CHANGELOGS, manifestProblems, nextVersion, VERSION_FILES } from '../scripts/release.js';

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'release.ts');
const snapshot = () =>
  Promise.all([...Object.values(VERSION_FILES), ...CHANGELOGS].map((f) => readFile(f, 'utf8')));

it('dry-runs a minor release: packs both SDKs, finds them publishable, prints what it would publish, bumps nothing', async () => {
  const before = await snapshot();
  const { version } = JSON.parse(await readFile(VERSION_FILES.packageJson, 'utf8')) as { version: string };
  const output = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', script, 'minor', '--dry-run'],
      { timeout: 240_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${stdout}${stderr}`)) : resolve(stdout)),
    ),
  );
  const next = nextVersion(version, 'minor');
  expect(output).toContain(`Release ${version} -> ${next}`);
  expect(output).toMatch(
    new RegExp(`@portico/sdk@${next}: portico-sdk-${version}\\.tgz \\(\\d+ files; publishable\\)`),
  );
  expect(output).toMatch(new RegExp(`portico==${next}: portico-${version}-py3-none-any\\.whl`));
  expect(output).toMatch(
    /would publish:\n {2}npm publish \S+\.tgz --access public\n {2}\S+ -m twine upload \S+\.whl/,
  );
  expect(await snapshot()).toEqual(before);
}, 240_000);

it('refuses a packed package.json that is private, keeps a workspace: range or points at missing files', () => {
  const files = ['dist/esm/index.js', 'README.md', 'CHANGELOG.md'];
  const good = {
    name: '@portico/sdk',
    version: '1.2.3',
    exports: { '.': './dist/esm/index.js' },
    dependencies: { 'openapi-fetch': '0.17.0' },
  };
  expect(manifestProblems(good, files, '1.2.3')).toEqual([]);
  expect(manifestProblems({ ...good, private: true }, files, '1.2.3')).toEqual(['it is private: true']);
  expect(
    manifestProblems({ ...good, dependencies: { '@portico/contract': 'workspace:*' } }, files, '1.2.3'),
  ).toEqual(['dependencies @portico/contract is workspace:*']);
  expect(manifestProblems({ ...good, exports: { '.': './src/index.ts' } }, files, '1.2.3')).toContain(
    './src/index.ts is not in the package',
  );
  expect(manifestProblems(good, ['dist/esm/index.js', 'src/index.ts'], '1.2.4')).toEqual([
    'its version is 1.2.3, not 1.2.4',
    'README.md is not in the package',
    'CHANGELOG.md is not in the package',
    'it ships src/index.ts…',
  ]);
});
