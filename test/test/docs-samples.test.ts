// Every fenced code block of the repository's Markdown (README, docs/, the packages' READMEs) is found
// here and accounted for by the marker comment on the line before it (docs/contributing.md, "Code
// samples"); a block without one fails with its file:line.
// - `<!-- sample: run -->` (a script), `run receiver` (a webhook receiver), `run subscriber` (a bus
//   subscriber): run here as written (node with tsx, python3 with the local `portico`, bash) against a
//   service started here, with the PORTICO_* variables of `sampleEnv` and `ada.jpg`, `door.jpg` beside it.
// - `<!-- sample: run by <test file>, <phrase> -->`: run as written by that test, which finds the block by
//   <phrase> (or by the whole marker when there is none).
// - `<!-- sample: command -->`: operational commands, checked without doing their work: the pnpm script
//   and the filtered package exist, the program's own argument parser run for real (or its --help) takes
//   the subcommands and flags, the variables set are read by that program, the files named exist. Flags
//   of programs that are not ours (pip, apt-get, install…) are not checked, only what they name of ours.
// - `<!-- sample: output -->`: what something prints, or a layout (text or json); JSON must parse.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@portico/test-support/app';
import { HAS_MODELS, MODELS_SKIP_REASON, samePersonPair } from '@portico/test-support/faces';
import { adminOf } from '@portico/test-support/identity';
import { markdownFiles, ROOT } from './markdown-pages.js';
import { freePort } from '@portico/test-support/net';

// ---------------------------------------------------------------------------------------------------
// Blocks and their markers

interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The text of `<!-- sample: … -->` on the last non-blank line before the fence. */
  marker: string | undefined;
}

type Kind =
  | { kind: 'run'; role: 'script' | 'receiver' | 'subscriber' }
  | { kind: 'run by'; test: string; phrase: string | undefined }
  | { kind: 'command' }
  | { kind: 'output' };

function fencedBlocks(markdown: string, file: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const close = new RegExp(`^\\s*${open[1]![0]}{${open[1]!.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    blocks.push({
      file,
      line: i + 1,
      lang: open[2]!.toLowerCase(),
      code: lines.slice(i + 1, end).join('\n'),
      marker: /^\s*<!--\s*sample:\s*(.*?)\s*-->\s*$/.exec(lines[before] ?? '')?.[1],
    });
    i = end;
  }
  return blocks;
}

function kindOf(marker: string | undefined): Kind | undefined {
  if (marker === 'command' || marker === 'output') return { kind: marker };
  if (marker === 'run') return { kind: 'run', role: 'script' };
  if (marker === 'run receiver' || marker === 'run subscriber') {
    return { kind: 'run', role: marker === 'run receiver' ? 'receiver' : 'subscriber' };
  }
  const by = marker && /^run by (\S+?)(?:,\s*(.+))?$/.exec(marker);
  return by ? { kind: 'run by', test: by[1]!, phrase: by[2] } : undefined;
}

const where = (b: Pick<Block, 'file' | 'line'>) => `${path.relative(ROOT, b.file)}:${b.line}`;

/** How a run sample of each language is started, from the file it is written to. */
const INTERPRETERS: Record<string, { ext: string; argv: (file: string) => string[] }> = {
  ts: { ext: 'ts', argv: (f) => [process.execPath, '--import', 'tsx', f] },
  js: { ext: 'mjs', argv: (f) => [process.execPath, '--import', 'tsx', f] },
  python: {
    ext: 'py',
    argv: (f) => [existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', f],
  },
  sh: { ext: 'sh', argv: (f) => ['bash', '-e', f] },
};

/** What is wrong with a block's marker, if anything. */
function markerProblems(b: Block): string[] {
  const kind = kindOf(b.marker);
  if (!b.marker) return [`${where(b)}: no <!-- sample: run|command|output --> before this block`];
  if (!kind) return [`${where(b)}: unknown marker "sample: ${b.marker}"`];
  if (kind.kind === 'run' && !INTERPRETERS[b.lang]) return [`${where(b)}: no way to run a "${b.lang}" block`];
  if (kind.kind === 'output' && b.lang !== 'text' && b.lang !== 'json') {
    return [`${where(b)}: an output block is text or json, not "${b.lang}"`];
  }
  if (kind.kind === 'command' && b.lang !== 'sh')
    return [`${where(b)}: a command block is sh, not "${b.lang}"`];
  return [];
}

function outputProblems(b: Block): string[] {
  if (b.lang !== 'json') return [];
  try {
    JSON.parse(b.code);
    return [];
  } catch (e) {
    return [`${where(b)}: not JSON: ${(e as Error).message}`];
  }
}

/** The test that runs a `run by` block must exist, be a test file, and find the block by its phrase. */
function delegateProblems(b: Block): string[] {
  const kind = kindOf(b.marker);
  if (kind?.kind !== 'run by') return [];
  const test = path.join(ROOT, kind.test);
  if (!/^[^/]+(\/[^/]+)?\/test\/.+\.test\.ts$/.test(kind.test) || !existsSync(test)) {
    return [`${where(b)}: ${kind.test} is not a test file of the workspace`];
  }
  const source = readFileSync(test, 'utf8');
  const looksFor = kind.phrase ?? `<!-- sample: ${b.marker} -->`;
  const problems: string[] = [];
  if (!source.includes(looksFor)) problems.push(`${where(b)}: ${kind.test} does not look for "${looksFor}"`);
  if (!source.includes(path.basename(b.file))) {
    problems.push(`${where(b)}: ${kind.test} does not read ${path.basename(b.file)}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------
// Commands

/**
 * The commands of a shell block, each as its words: continuation lines joined, comments dropped, split at
 * `&&`, `||`, `|`, `;` and line ends; quotes removed, `<a placeholder>` kept as one word, and the
 * brackets of `[--optional flags]` dropped (what a synopsis offers is checked as if given).
 */
function shellCommands(code: string): string[][] {
  const text = code.replace(/\\\n/g, ' ');
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const closing = c === "'" || c === '"' ? c : c === '<' ? '>' : undefined;
    const close = closing ? text.indexOf(closing, i + 1) : -1;
    if (closing && close > i) {
      word = (word ?? '') + (c === '<' ? text.slice(i, close + 1) : text.slice(i + 1, close));
      i = close;
    } else if (c === '#' && word === undefined) {
      const eol = text.indexOf('\n', i);
      i = (eol < 0 ? text.length : eol) - 1;
    } else if (c === '\n' || c === ';' || c === '&' || c === '|') {
      endCommand();
      if ((c === '&' || c === '|') && text[i + 1] === c) i++;
    } else if (/\s/.test(c)) endWord();
    else if (c !== '[' && c !== ']') word = (word ?? '') + c;
  }
  endCommand();
  return commands;
}

interface Package {
  name: string;
  dir: string;
  scripts: Record<string, string>;
  version: string;
}

const workspace = new Map<string, Package>(
  ['.', ...['.', 'shared'].flatMap((d) => readdirSync(path.join(ROOT, d)).map((n) => path.join(d, n)))]
    .filter((d) => existsSync(path.join(ROOT, d, 'package.json')))
    .map((d) => {
      const json = JSON.parse(readFileSync(path.join(ROOT, d, 'package.json'), 'utf8'));
      return [
        json.name,
        { name: json.name, dir: path.join(ROOT, d), scripts: json.scripts ?? {}, version: json.version },
      ];
    }),
);
const rootPackage = workspace.get(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).name)!;

/** A script as pnpm ends up running it: `pnpm [--silent] --filter <package> <script>` followed. */
function resolveScript(pkg: Package, script: string): { pkg: Package; script: string; command: string } {
  const command = pkg.scripts[script]!;
  const m = /^pnpm (?:(?:--silent|-s) )?--filter (\S+) (\S+)$/.exec(command);
  const next = m && workspace.get(m[1]!);
  return next && m[2]! in next.scripts ? resolveScript(next, m[2]!) : { pkg, script, command };
}

const sourceCache = new Map<string, string>();
/** The code of a package (no dependencies, tests or build output), to find the variables it reads. */
function sourceOf(pkg: Package): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      if (e.name.startsWith('.') || ['node_modules', 'dist', 'test', 'generated'].includes(e.name)) return [];
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return pkg.dir === ROOT ? [] : walk(full);
      return /\.[cm]?[jt]s$/.test(e.name) ? [readFileSync(full, 'utf8')] : [];
    });
  if (!sourceCache.has(pkg.dir)) sourceCache.set(pkg.dir, walk(pkg.dir).join('\n'));
  return sourceCache.get(pkg.dir)!;
}

/** Two programs at a time: the machine is shared. */
let running = 0;
const queue: (() => void)[] = [];
async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= 2) await new Promise<void>((resolve) => queue.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    queue.shift()?.();
  }
}

/** Runs a package script's command with extra arguments, as pnpm would (its folder, its bins). */
function runScript(
  target: { pkg: Package; command: string },
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return limited(
    () =>
      new Promise((resolve) => {
        const child = spawn('sh', ['-c', `${target.command} "$@"`, 'sh', ...args], {
          cwd: target.pkg.dir,
          env: {
            PATH:
              [target.pkg.dir, ROOT].map((d) => path.join(d, 'node_modules', '.bin')).join(':') +
              `:${process.env.PATH}`,
            HOME: process.env.HOME ?? os.tmpdir(),
            INIT_CWD: ROOT,
            ...env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 60_000,
        });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        child.on('close', (code) => resolve({ code, output }));
      }),
  );
}

/** Nowhere: relative paths given to the evaluation are taken from here, so it finds no photo to read. */
const NOWHERE = path.join(os.tmpdir(), `portico-docs-samples-nowhere-${process.pid}`);

/**
 * How each program's command line is checked without doing its work, by package and script:
 * - parse: run with the sample's arguments under an environment that stops the program right after its
 *   parser (a bad setting, no photos); it must get that far (`reached`);
 * - help: its `--help` must name every flag and word the sample gives;
 * - source: it has no parser; its entry file must name every flag.
 */
const ARGUMENTS: Record<
  string,
  { how: 'parse'; env: Record<string, string>; reached: RegExp } | { how: 'help' } | { how: 'source' }
> = {
  '@portico/cloud cli': { how: 'parse', env: { PORT: 'not-a-port' }, reached: /Invalid configuration/ },
  '@portico/device-agent start': {
    how: 'parse',
    env: { AGENT_PORT: 'not-a-port' },
    reached: /device-agent configuration/,
  },
  '@portico/face-engine eval': { how: 'parse', env: { INIT_CWD: NOWHERE }, reached: /No labelled folder/ },
  '@portico/face-engine fetch-eval-data': { how: 'help' },
  '@portico/cloud bench:fleet': { how: 'help' },
  '@portico/face-engine bench': { how: 'source' },
};

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const argumentCache = new Map<string, Promise<string[]>>();

function checkArguments(target: ReturnType<typeof resolveScript>, args: string[]): Promise<string[]> {
  const id = `${target.pkg.name} ${target.script}`;
  const key = `${id} ${JSON.stringify(args)}`;
  if (!argumentCache.has(key)) argumentCache.set(key, argumentProblems(id, target, args));
  return argumentCache.get(key)!;
}

async function argumentProblems(
  id: string,
  target: ReturnType<typeof resolveScript>,
  args: string[],
): Promise<string[]> {
  const check = ARGUMENTS[id];
  const shown = `pnpm … ${target.script} ${args.join(' ')}`;
  if (!check) return [`${shown}: no way to check the arguments of ${id} (add it to ARGUMENTS)`];
  if (check.how === 'parse') {
    const { output } = await runScript(target, args, check.env);
    return check.reached.test(output) ? [] : [`${shown}: refused by the program:\n${output.slice(-600)}`];
  }
  if (check.how === 'source') {
    const entry = target.command
      .split(/\s+/)
      .filter((w) => /\.[cm]?[jt]s$/.test(w))
      .pop();
    const source = entry ? readFileSync(path.join(target.pkg.dir, entry), 'utf8') : '';
    const unknown = args.filter((a) => !a.startsWith('-') || !source.includes(`'${a}'`));
    return unknown.length ? [`${shown}: ${entry ?? id} does not read ${unknown.join(', ')}`] : [];
  }
  const { output: help } = await runScript(target, ['--help'], {});
  const named = (w: string) => new RegExp(`(^|[\\s[|])${escapeRe(w)}(?![\\w-])`, 'm').test(help);
  const takesValue = (flag: string) => new RegExp(`${escapeRe(flag)}[ =][A-Z<]`).test(help);
  const unknown = args.filter((a, i) => {
    if (a.startsWith('-')) return !named(a.split('=')[0]!);
    const previous = args[i - 1];
    return !(previous?.startsWith('-') && !previous.includes('=') && takesValue(previous)) && !named(a);
  });
  return unknown.length
    ? [`${shown}: its --help does not name ${unknown.join(', ')}:\n${help.slice(0, 600)}`]
    : [];
}

/** Relative paths of the repository named by a command (globs match something). */
function pathProblems(words: string[], base = ROOT): string[] {
  return words
    .filter((w) => w.includes('/') && !/^[-/<$~]/.test(w) && !w.includes('://'))
    .filter((w) => {
      if (!w.includes('*')) return !existsSync(path.join(base, w));
      const dir = path.join(base, path.dirname(w));
      const re = new RegExp(`^${path.basename(w).split('*').map(escapeRe).join('.*')}$`);
      return !existsSync(dir) || !readdirSync(dir).some((f) => re.test(f));
    })
    .map((w) => `${w}: no such file in the repository`);
}

const APT_LISTS = existsSync('/var/lib/apt/lists')
  ? readdirSync('/var/lib/apt/lists').some((f) => f.includes('_Packages'))
  : false;

function exitCode(command: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
}

const pythonVersion = /^version = "([^"]+)"/m.exec(
  readFileSync(path.join(ROOT, 'shared/sdk-python/pyproject.toml'), 'utf8'),
)![1];
/** Release file names a command may name: `pnpm pack`'s tarballs and the Python wheel, at today's versions. */
const RELEASE_FILES = new Set([
  ...[...workspace.values()].map((p) => `${p.name.replace(/^@/, '').replace('/', '-')}-${p.version}.tgz`),
  `portico-${pythonVersion}-py3-none-any.whl`,
]);

async function pnpmProblems(words: string[], env: string[]): Promise<string[]> {
  let pkg = rootPackage;
  let i = 0;
  for (; words[i]?.startsWith('-'); i++) {
    if (words[i] === '--filter') {
      const found = workspace.get(words[++i]!);
      if (!found) return [`pnpm --filter ${words[i]}: no such package in the workspace`];
      pkg = found;
    } else if (words[i] !== '-s' && words[i] !== '--silent')
      return [`pnpm ${words[i]}: an option this test does not know`];
  }
  const [command, ...rest] = words.slice(i);
  if (command === 'install' || command === 'pack') return [];
  if (command === 'exec') {
    const [bin, ...args] = rest;
    const hasBin = [pkg.dir, ROOT].some((d) => existsSync(path.join(d, 'node_modules', '.bin', bin ?? '')));
    const unread = env.filter((v) => !sourceOf(pkg).includes(v));
    return [
      ...(hasBin ? [] : [`pnpm exec ${bin}: ${pkg.name} has no such program`]),
      ...pathProblems(args, pkg.dir),
      ...unread.map((v) => `${v}: not read by ${pkg.name}`),
    ];
  }
  if (command === 'vitest') {
    if (!existsSync(path.join(ROOT, 'node_modules', '.bin', 'vitest'))) return ['vitest is not installed'];
    const files = rest.filter((w) => w.endsWith('.test.ts'));
    const name = rest[rest.indexOf('-t') + 1];
    const named = rest.includes('-t')
      ? files.filter((f) => !readFileSync(path.join(ROOT, f), 'utf8').includes(name!))
      : [];
    return [...pathProblems(files), ...named.map((f) => `${f} has no test named "${name}"`)];
  }
  if (!command || !(command in pkg.scripts)) return [`${pkg.name} has no script "${command}"`];
  const target = resolveScript(pkg, command);
  const args = rest[0] === '--' ? rest.slice(1) : rest;
  return [
    ...env
      .filter((v) => !sourceOf(target.pkg).includes(v))
      .map((v) => `${v}: not read by ${target.pkg.name}`),
    ...(args.length ? await checkArguments(target, args) : []),
  ];
}

/** What is wrong with one command line of a command block. */
async function commandProblems(words: string[]): Promise<string[]> {
  const env: string[] = [];
  let i = 0;
  for (;;) {
    while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] ?? '')) env.push(words[i++]!.split('=')[0]!);
    if (words[i] === 'env') i++;
    else if (words[i] === 'sudo')
      for (i++; words[i]?.startsWith('-');) i += ['-u', '-g'].includes(words[i]!) ? 2 : 1;
    else break;
  }
  const [program, ...args] = words.slice(i);
  const operands = args.filter((a) => !a.startsWith('-'));
  switch (program) {
    case 'pnpm':
      return pnpmProblems(args, env);
    case 'npm':
    case 'pip':
    case 'pip3':
      return [
        ...pathProblems(args),
        ...args
          .map((a) => path.basename(a))
          .filter((f) => /\.(tgz|whl)$/.test(f) && !RELEASE_FILES.has(f))
          .map((f) => `${f}: not what the release is called (${[...RELEASE_FILES].join(', ')})`),
      ];
    case 'install':
    case 'cp':
      return pathProblems(args);
    case 'systemctl': {
      if (!['enable', 'disable', 'start', 'stop', 'restart', 'status'].includes(operands[0]!)) return [];
      const units = readdirSync(ROOT).flatMap((d) =>
        existsSync(path.join(ROOT, d, 'deploy')) ? readdirSync(path.join(ROOT, d, 'deploy')) : [],
      );
      return operands
        .slice(1)
        .filter((u) => !units.includes(u.endsWith('.service') ? u : `${u}.service`))
        .map((u) => `systemctl ${operands[0]} ${u}: no such unit in a deploy/ folder`);
    }
    case 'apt-get': {
      if (!APT_LISTS) {
        console.warn('no apt package lists on this machine: Debian package names not checked');
        return [];
      }
      const packages = operands.slice(1);
      const codes = await Promise.all(
        packages.map((p) => exitCode('apt-cache', ['show', '--no-all-versions', p])),
      );
      return packages
        .filter((_, k) => codes[k] !== 0)
        .map((p) => `apt-get install ${p}: no such Debian package`);
    }
    // They name nothing of the repository: the checkout's folder, the system's users.
    case 'cd':
    case 'git':
    case 'useradd':
      return [];
    default:
      return [`${program}: a program this test has no check for`];
  }
}

async function commandBlockProblems(b: Pick<Block, 'file' | 'line' | 'code'>): Promise<string[]> {
  const problems = await Promise.all(shellCommands(b.code).map(commandProblems));
  return problems.flat().map((p) => `${where(b)}: ${p}`);
}

// ---------------------------------------------------------------------------------------------------
// The blocks of the repository

const blocks = markdownFiles().flatMap((f) => fencedBlocks(readFileSync(f, 'utf8'), f));
const ofKind = <K extends Kind['kind']>(k: K) =>
  blocks
    .map((b) => ({ b, kind: kindOf(b.marker) }))
    .filter((x): x is { b: Block; kind: Extract<Kind, { kind: K }> } => x.kind?.kind === k);
const named = <T extends { b: Block }>(xs: T[]) => xs.map((x) => [`${where(x.b)} (${x.b.lang})`, x] as const);

describe('the code samples of the documentation', () => {
  it('finds every fenced block, each with a marker that says how it is checked', () => {
    const counts = new Map<string, number>();
    for (const b of blocks) {
      const kind = kindOf(b.marker);
      const label = kind?.kind === 'run' ? `run ${kind.role}` : (kind?.kind ?? 'unmarked');
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    console.log(`${blocks.length} blocks: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}`);
    expect(blocks.length).toBeGreaterThan(30);
    expect(blocks.map((b) => path.relative(ROOT, b.file))).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/integrators/webhooks.md',
        'shared/sdk-typescript/README.md',
      ]),
    );
    expect(blocks.flatMap(markerProblems)).toEqual([]);
  });

  it('catches a deliberately broken sample of each kind (the checks are not blind)', async () => {
    const page = path.join(ROOT, 'broken.md');
    const broken = fencedBlocks(
      [
        '# A page',
        '',
        '```sh',
        'ls',
        '```',
        '<!-- sample: output -->',
        '```json',
        '{ "a": 1, }',
        '```',
        '<!-- sample: run by test/test/no-such.test.ts -->',
        '```sh',
        'true',
        '```',
        '<!-- sample: output -->',
        '```ts',
        'x',
        '```',
      ].join('\n'),
      page,
    );
    expect(broken.map((b) => b.line)).toEqual([3, 7, 11, 15]);
    expect(markerProblems(broken[0]!)).toEqual([
      'broken.md:3: no <!-- sample: run|command|output --> before this block',
    ]);
    expect(outputProblems(broken[1]!).join()).toMatch(/^broken\.md:7: not JSON/);
    expect(delegateProblems(broken[2]!).join()).toMatch(/no-such\.test\.ts is not a test file/);
    expect(markerProblems(broken[3]!).join()).toMatch(/an output block is text or json/);

    const commands = await Promise.all(
      [
        'pnpm -s portico tenant create --slug acme --tenant-name Acme', // the CLI refuses the flag
        'pnpm --filter @portico/face-engine fetch-eval-data -- --destination /tmp/faces', // not in its --help
        'pnpm --filter @portico/face-engine bench -- --slow', // not read by the bench
        'pnpm --filter @portico/cloud stat', // no such script
        'PORTICO_NO_SUCH_SETTING=1 pnpm start', // a variable nothing reads
        'cp kiosk-app/deploy/*.unit /etc/systemd/system/ && systemctl enable portico-door', // no such files
        'npm install /tmp/portico-sdk-9.9.9.tgz',
        'kubectl apply -f portico.yaml', // a program nothing checks
      ].map((code, i) => commandBlockProblems({ file: page, line: i + 1, code })),
    );
    for (const [i, problems] of commands.entries())
      expect(problems.length, `command ${i + 1}`).toBeGreaterThan(0);
    expect(commands[0]!.join()).toMatch(/refused by the program:[\s\S]*--tenant-name/);
    expect(commands[5]!.length).toBe(2);
    // And the same checks take a sound command.
    expect(
      await commandBlockProblems({
        file: page,
        line: 1,
        code: 'pnpm -s portico tenant create --slug a --name A',
      }),
    ).toEqual([]);
  }, 60_000);

  describe.each(named(ofKind('output')))('output: %s', (_, { b }) => {
    it('parses when it is JSON', () => expect(outputProblems(b)).toEqual([]));
  });

  describe.each(named(ofKind('run by')))('run by another test: %s', (_, { b }) => {
    it('names a test that finds this block', () => expect(delegateProblems(b)).toEqual([]));
  });

  describe('commands', () => {
    it.concurrent.each(named(ofKind('command')))(
      '%s: scripts, arguments, variables and files are what the programs take',
      async (_, { b }) => {
        expect(shellCommands(b.code).length).toBeGreaterThan(0);
        expect(await commandBlockProblems(b)).toEqual([]);
      },
      90_000,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Samples run here, against one service

/** Where a sample finds what it imports: the workspace's packages, as an integrator's node_modules. */
const SAMPLE_MODULES: Record<string, string> = {
  '@portico/sdk': 'shared/sdk-typescript',
  '@portico/face-engine': 'shared/face-engine',
  express: 'cloud/node_modules/express',
  mqtt: 'shared/sdk-typescript/node_modules/mqtt',
  tsx: 'node_modules/tsx',
};

interface Started {
  output(): string;
  exited(): boolean;
  done: Promise<number | null>;
  stop(): Promise<void>;
}

describe('the samples run against a service', () => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  let project: string;
  let sampleEnv: Record<string, string>;

  beforeAll(async () => {
    // The embedded broker even when the suite runs against an external one: a bus sample logs in with an
    // API key, which only the embedded broker takes.
    t = await createTestApp({ env: { MQTT_URL: '' } });
    admin = await adminOf(t);
    const key = async (body: object) => {
      const res = await t.request('POST', '/v1/applications', { headers: admin.headers, body });
      expect(res.status, res.text).toBe(201);
      return res.body.apiKey.key as string;
    };
    sampleEnv = {
      PORTICO_URL: t.url,
      PORTICO_API_KEY: await key({ name: 'docs samples' }),
      PORTICO_TENANT: admin.tenant.slug,
      PORTICO_TENANT_ID: admin.tenant.tenantId,
      PORTICO_WEBHOOK_SECRET: admin.tenant.webhookSecret,
      PORTICO_BUS_URL: t.deps.bus.url,
      PORTICO_BUS_KEY: await key({ name: 'docs samples bus', scopes: ['bus:subscribe'] }),
    };
    // An integrator's ES module project (samples use top-level await).
    project = await mkdtemp(path.join(os.tmpdir(), 'portico-samples-'));
    await writeFile(path.join(project, 'package.json'), '{ "type": "module" }\n');
    for (const [name, target] of Object.entries(SAMPLE_MODULES)) {
      await mkdir(path.dirname(path.join(project, 'node_modules', name)), { recursive: true });
      await symlink(await realpath(path.join(ROOT, target)), path.join(project, 'node_modules', name));
    }
    if (HAS_MODELS) {
      const [ada, door] = await samePersonPair();
      await writeFile(path.join(project, 'ada.jpg'), ada.bytes);
      await writeFile(path.join(project, 'door.jpg'), door.bytes);
    }
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  /** A sample written to the project folder and started as written, with the PORTICO_* variables. */
  async function start(b: Pick<Block, 'file' | 'line' | 'lang' | 'code'>, env: Record<string, string> = {}) {
    const interpreter = INTERPRETERS[b.lang]!;
    const file = path.join(project, `${path.basename(b.file, '.md')}-${b.line}.${interpreter.ext}`);
    await writeFile(file, b.code);
    const [command, ...args] = interpreter.argv(file);
    const child = spawn(command!, args, {
      cwd: project,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME ?? os.tmpdir(),
        PYTHONPATH: path.join(ROOT, 'shared', 'sdk-python', 'src'),
        PYTHONDONTWRITEBYTECODE: '1',
        ...sampleEnv,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const done = new Promise<number | null>((resolve) => child.on('close', resolve));
    const started: Started = {
      output: () => output,
      exited: () => child.exitCode !== null || child.signalCode !== null,
      done,
      stop: async () => {
        if (!started.exited()) child.kill('SIGTERM');
        await done;
      },
    };
    return started;
  }

  const until = async (ok: () => boolean | Promise<boolean>, ms: number, every = 100) => {
    for (const end = Date.now() + ms; Date.now() < end;) {
      if (await ok()) return true;
      await new Promise((r) => setTimeout(r, every));
    }
    return ok();
  };

  const listening = (port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(!!socket.end()));
      socket.on('error', () => resolve(false));
    });

  const signed = (body: string, secret: string, timestamp: number) => {
    const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
    return {
      'content-type': 'application/json',
      'x-service-timestamp': String(timestamp),
      'x-service-signature': hmac(body),
      'x-service-signature-v2': hmac(`${timestamp}.${body}`),
    };
  };

  /**
   * A webhook receiver listens on PORT at /portico: a test event the service signs is answered 2xx, and a
   * copy signed with another secret, or with the right one an hour ago (a replay), is answered 401.
   */
  async function receiverProblems(b: Pick<Block, 'file' | 'line' | 'lang' | 'code'>): Promise<string[]> {
    const port = await freePort();
    const sample = await start(b, { PORT: String(port) });
    const problems: string[] = [];
    try {
      if (!(await until(async () => sample.exited() || (await listening(port)), 30_000)) || sample.exited()) {
        return [`${where(b)}: never listened on PORT ${port}:\n${sample.output()}`];
      }
      const url = `http://127.0.0.1:${port}/portico`;
      const set = await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
        headers: admin.headers,
        body: { webhookUrl: url },
      });
      expect(set.status, set.text).toBe(200);
      const sent = await t.request('POST', '/v1/admin/webhooks/test', { headers: admin.headers });
      expect(sent.status, sent.text).toBe(202);
      let delivery = sent.body;
      await until(async () => {
        delivery = (
          await t.request('GET', `/v1/admin/webhook-deliveries/${sent.body.id}`, { headers: admin.headers })
        ).body;
        return delivery.attempts.length > 0;
      }, 15_000);
      if (delivery.status !== 'delivered') {
        problems.push(`a delivery the service signed was not taken: ${JSON.stringify(delivery.attempts)}`);
      }
      const body = JSON.stringify({
        id: 'forged',
        event: 'webhook.test',
        tenantId: admin.tenant.tenantId,
        environment: 'live',
        timestamp: new Date().toISOString(),
        data: { requestedBy: 'nobody', message: 'forged' },
      });
      const now = Math.floor(Date.now() / 1000);
      for (const [what, headers] of [
        ['signed with another secret', signed(body, 'not the secret', now)],
        ['signed an hour ago (a replay)', signed(body, admin.tenant.webhookSecret, now - 3600)],
      ] as const) {
        const res = await fetch(url, { method: 'POST', headers, body });
        if (res.status !== 401) problems.push(`a delivery ${what} was answered ${res.status}, not 401`);
      }
    } finally {
      await sample.stop();
      await t.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
        headers: admin.headers,
        body: { webhookUrl: null },
      });
    }
    return problems.map((p) => `${where(b)}: ${p}\n${sample.output().slice(-600)}`);
  }

  /** A bus subscriber prints each check-in it receives, with its topic. */
  async function subscriberProblems(b: Block): Promise<string[]> {
    const sample = await start(b);
    try {
      const person = await t.request('POST', '/v1/persons', {
        headers: { authorization: `Bearer ${sampleEnv.PORTICO_API_KEY}` },
        body: { name: 'Bus Reader', document: 'BR-1' },
      });
      expect(person.status, person.text).toBe(201);
      const topic = `portico/v1/tenants/${admin.tenant.tenantId}/checkin.success`;
      // Checked in again until the subscriber prints one: it says nothing once subscribed.
      const seen = await until(
        async () => {
          if (sample.exited()) return true;
          const res = await t.request('POST', '/v1/checkin/manual', {
            headers: admin.headers,
            body: { personId: person.body.id },
          });
          expect(res.status, res.text).toBe(200);
          return sample.output().includes(topic);
        },
        20_000,
        700,
      );
      return seen && sample.output().includes(topic)
        ? []
        : [`${where(b)}: printed no ${topic}:\n${sample.output().slice(-600)}`];
    } finally {
      await sample.stop();
    }
  }

  async function scriptProblems(b: Block): Promise<string[]> {
    const sample = await start(b);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      sample.done,
      new Promise((resolve) => (timer = setTimeout(() => resolve('timed out'), 90_000))),
    ]);
    clearTimeout(timer);
    await sample.stop();
    return code === 0 ? [] : [`${where(b)}: exit ${code}:\n${sample.output().slice(-1000)}`];
  }

  it.each(named(ofKind('run')))(
    'runs %s as written',
    async (_, { b, kind }) => {
      if (kind.role === 'script' && b.code.includes('@portico/face-engine') && !HAS_MODELS) {
        console.warn(`${where(b)} not run: ${MODELS_SKIP_REASON}`);
        return;
      }
      const run = { script: scriptProblems, receiver: receiverProblems, subscriber: subscriberProblems }[
        kind.role
      ];
      expect(await run(b)).toEqual([]);
    },
    120_000,
  );

  it('catches a receiver that takes every delivery without verifying it', async () => {
    const careless = [
      'from http.server import BaseHTTPRequestHandler, HTTPServer',
      'import os',
      'class Careless(BaseHTTPRequestHandler):',
      '    def do_POST(self):',
      '        self.rfile.read(int(self.headers["Content-Length"]))',
      '        self.send_response(204)',
      '        self.end_headers()',
      'HTTPServer(("", int(os.environ["PORT"])), Careless).serve_forever()',
    ].join('\n');
    const problems = await receiverProblems({
      file: path.join(ROOT, 'careless.md'),
      line: 1,
      lang: 'python',
      code: careless,
    });
    expect(problems.join('\n')).toMatch(
      /another secret was answered 204[\s\S]*an hour ago \(a replay\) was answered 204/,
    );
  }, 60_000);
});
