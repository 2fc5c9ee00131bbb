// Releases both SDKs under one version: `pnpm --filter @portico/sdk release <patch|minor|major|x.y.z>`
// (add `--dry-run` to change nothing). One version: package.json's, which src/version.ts, the Python
// pyproject.toml and portico/__init__.py must repeat. A release:
//   1. checks the four agree and that both CHANGELOG.md have notes under `## Unreleased`;
//   2. (not in a dry run) writes the new version into the four files and heads the notes with it;
//   3. packs both (`pnpm pack`, `pip wheel`) into `--out` (default a temporary folder);
//   4. checks what was packed is publishable (the packed package.json not private, no `workspace:`
//      range, its exports and files present, nothing of src/ or test/; the wheel's name, version, files);
//   5. prints what it publishes, and publishes only with `--publish` (`npm publish`, `twine upload`).
// The workspace's package.json is not private: what `pnpm pack` writes is what is published.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const tsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pyDir = path.resolve(tsDir, '..', 'sdk-python');
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

export const VERSION_FILES = {
  packageJson: path.join(tsDir, 'package.json'),
  versionTs: path.join(tsDir, 'src', 'version.ts'),
  pyproject: path.join(pyDir, 'pyproject.toml'),
  pyInit: path.join(pyDir, 'src', 'portico', '__init__.py'),
};
export const CHANGELOGS = [path.join(tsDir, 'CHANGELOG.md'), path.join(pyDir, 'CHANGELOG.md')];

const PATTERNS: Record<keyof typeof VERSION_FILES, RegExp> = {
  packageJson: /("version":\s*")(\d+\.\d+\.\d+)(")/,
  versionTs: /(VERSION = ')(\d+\.\d+\.\d+)(')/,
  pyproject: /(^version = ")(\d+\.\d+\.\d+)(")/m,
  pyInit: /(__version__ = ")(\d+\.\d+\.\d+)(")/,
};

export function nextVersion(current: string, bump: string): string {
  if (/^\d+\.\d+\.\d+$/.test(bump)) return bump;
  const [major, minor, patch] = current.split('.').map(Number) as [number, number, number];
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  if (bump === 'patch') return `${major}.${minor}.${patch + 1}`;
  throw new Error(`bump must be patch, minor, major or x.y.z, not "${bump}"`);
}

/** Why a packed package.json cannot be published as it is (empty: it can). */
export function manifestProblems(
  manifest: Record<string, unknown>,
  files: string[],
  version: string,
): string[] {
  const problems: string[] = [];
  if (manifest.private) problems.push('it is private: true');
  if (manifest.version !== version)
    problems.push(`its version is ${String(manifest.version)}, not ${version}`);
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies']) {
    for (const [name, range] of Object.entries((manifest[field] as Record<string, string>) ?? {})) {
      if (String(range).startsWith('workspace:')) problems.push(`${field} ${name} is ${range}`);
    }
  }
  const targets: string[] = [];
  const collect = (node: unknown) => {
    if (typeof node === 'string') targets.push(node);
    else if (node && typeof node === 'object') Object.values(node).forEach(collect);
  };
  collect(manifest.exports);
  for (const field of ['main', 'module', 'types']) collect(manifest[field]);
  for (const target of targets) {
    const file = target.replace(/^\.\//, '');
    if (file !== 'package.json' && !files.includes(file)) problems.push(`${target} is not in the package`);
  }
  if (targets.some((t) => t.includes('/src/') || (t.endsWith('.ts') && !t.endsWith('.d.ts')))) {
    problems.push('its exports point at TypeScript sources');
  }
  for (const needed of ['README.md', 'CHANGELOG.md']) {
    if (!files.includes(needed)) problems.push(`${needed} is not in the package`);
  }
  const stray = files.filter((f) => /^(src|test|scripts)\//.test(f));
  if (stray.length) problems.push(`it ships ${stray.slice(0, 3).join(', ')}…`);
  return problems;
}

/** Why a wheel cannot be published as it is (empty: it can). */
export function wheelProblems(files: string[], metadata: string, version: string): string[] {
  const problems: string[] = [];
  if (!/^Name: portico$/m.test(metadata)) problems.push('its Name is not portico');
  if (!new RegExp(`^Version: ${version.replace(/\./g, '\\.')}$`, 'm').test(metadata)) {
    problems.push(`its Version is not ${version}`);
  }
  for (const needed of [
    'portico/__init__.py',
    'portico/_generated.py',
    'portico/client.py',
    'portico/py.typed',
  ]) {
    if (!files.includes(needed)) problems.push(`${needed} is not in the wheel`);
  }
  return problems;
}

function unreleasedNotes(changelog: string): string {
  const m = /^## Unreleased\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(changelog);
  return m?.[1]?.trim() ?? '';
}

async function main(argv: string[]) {
  const dryRun = argv.includes('--dry-run');
  const publish = argv.includes('--publish');
  const outAt = argv.indexOf('--out');
  const bump = argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--out');
  if (!bump) throw new Error('usage: release <patch|minor|major|x.y.z> [--dry-run] [--out dir] [--publish]');
  if (dryRun && publish) throw new Error('--dry-run publishes nothing: drop --publish');

  const texts = Object.fromEntries(
    await Promise.all(Object.entries(VERSION_FILES).map(async ([k, f]) => [k, await readFile(f, 'utf8')])),
  ) as Record<keyof typeof VERSION_FILES, string>;
  const versions = Object.fromEntries(
    Object.entries(PATTERNS).map(([k, re]) => [k, re.exec(texts[k as keyof typeof VERSION_FILES])?.[2]]),
  );
  const current = versions.packageJson!;
  const disagree = Object.entries(versions).filter(([, v]) => v !== current);
  if (disagree.length) throw new Error(`the versions disagree: ${JSON.stringify(versions)}`);
  const next = nextVersion(current, bump);

  const notes = await Promise.all(CHANGELOGS.map(async (f) => unreleasedNotes(await readFile(f, 'utf8'))));
  CHANGELOGS.forEach((f, i) => {
    if (!notes[i]) throw new Error(`${path.relative(tsDir, f)} has no notes under "## Unreleased"`);
  });

  if (!dryRun) {
    for (const [k, file] of Object.entries(VERSION_FILES)) {
      const key = k as keyof typeof VERSION_FILES;
      await writeFile(file, texts[key].replace(PATTERNS[key], `$1${next}$3`));
    }
    const date = new Date().toISOString().slice(0, 10);
    for (const f of CHANGELOGS) {
      const text = await readFile(f, 'utf8');
      await writeFile(f, text.replace(/^## Unreleased\n/m, `## Unreleased\n\n## ${next} (${date})\n`));
    }
  }
  // A dry run packs what is on disk: the version it would publish is the next one, the packed one the current.
  const packedVersion = dryRun ? current : next;

  const out =
    outAt >= 0 ? path.resolve(argv[outAt + 1]!) : await mkdtemp(path.join(os.tmpdir(), 'portico-release-'));
  // prepack builds dist/ (a build output, like any `pnpm pack`); nothing tracked changes.
  execFileSync('pnpm', ['pack', '--pack-destination', out], {
    cwd: tsDir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  execFileSync(PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-index', '-q', '-w', out, pyDir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const artifacts = await readdir(out);
  const tarball = path.join(out, artifacts.find((f) => f.endsWith(`-${packedVersion}.tgz`)) ?? 'missing.tgz');
  const wheel = path.join(
    out,
    artifacts.find((f) => f.endsWith(`${packedVersion}-py3-none-any.whl`)) ?? 'missing.whl',
  );

  const tarFiles = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
  const manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
  );
  const wheelListing = execFileSync(
    PYTHON,
    ['-c', 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print("\\n".join(z.namelist()))', wheel],
    { encoding: 'utf8' },
  );
  const wheelFiles = wheelListing.split('\n').filter(Boolean);
  const metadataName = wheelFiles.find((f) => f.endsWith('.dist-info/METADATA'))!;
  const metadata = execFileSync(
    PYTHON,
    [
      '-c',
      'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())',
      wheel,
      metadataName,
    ],
    { encoding: 'utf8' },
  );
  const problems = [
    ...manifestProblems(manifest, tarFiles, packedVersion).map((p) => `@portico/sdk: ${p}`),
    ...wheelProblems(wheelFiles, metadata, packedVersion).map((p) => `portico (wheel): ${p}`),
  ];
  if (problems.length) throw new Error(`not publishable:\n- ${problems.join('\n- ')}`);

  const npmCommand = `npm publish ${tarball} --access public`;
  const pyCommand = `${PYTHON} -m twine upload ${wheel}`;
  console.log(
    [
      `${dryRun ? 'Dry run: nothing bumped. ' : ''}Release ${current} -> ${next}`,
      `@portico/sdk@${next}: ${path.basename(tarball)} (${tarFiles.length} files; publishable)`,
      `portico==${next}: ${path.basename(wheel)} (${wheelFiles.length} files; publishable)`,
      `notes:\n${notes[0]}`,
      `${dryRun || !publish ? 'would publish' : 'publishing'}:\n  ${npmCommand}\n  ${pyCommand}\n  git tag sdk-v${next}`,
    ].join('\n'),
  );
  if (!dryRun && publish) {
    execFileSync('npm', ['publish', tarball, '--access', 'public'], { stdio: 'inherit' });
    execFileSync(PYTHON, ['-m', 'twine', 'upload', wheel], { stdio: 'inherit' });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}
