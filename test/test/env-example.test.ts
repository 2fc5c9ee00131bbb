// .env.example lists every variable the cloud's configuration reads (the zod schema of cloud/src/config.ts,
// plus the face engine's PORTICO_MODEL_DIR), and the configuration table of docs/operators/configuration.md
// names the same ones: a variable added to one and forgotten in another fails here.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (p: string) => readFileSync(ROOT + p, 'utf8');

function schemaKeys(): string[] {
  const src = read('cloud/src/config.ts');
  const body = /const EnvSchema = z\.object\(\{([\s\S]*?)\n\}\);/.exec(src)?.[1];
  if (!body) throw new Error('EnvSchema not found in cloud/src/config.ts');
  return [...body.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
}

const sorted = (a: Iterable<string>) => [...new Set(a)].sort();
const EXTRA = ['PORTICO_MODEL_DIR']; // read by @portico/face-engine, not by the zod schema

describe('.env.example', () => {
  it('lists every variable of the configuration, and nothing else', () => {
    const listed = [...read('.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    expect(schemaKeys().length).toBeGreaterThan(20);
    expect(sorted(listed)).toEqual(sorted([...schemaKeys(), ...EXTRA]));
  });

  it('matches the configuration table of the operators guide', () => {
    const doc = read('docs/operators/configuration.md');
    const inTable = doc
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
    expect(sorted(inTable)).toEqual(sorted([...schemaKeys(), ...EXTRA]));
  });
});
