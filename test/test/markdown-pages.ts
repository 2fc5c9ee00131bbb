// The repository's Markdown pages (README, docs/, the packages' READMEs and the rest), found the same way
// by the docs tests: every `*.md` outside dependencies, build output, data and dot-folders.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SKIP = new Set(['node_modules', '.git', 'data', 'dist', '.models', 'artifacts']);

export function markdownFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name) || e.name.startsWith('.')) return [];
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(full);
    return e.name.endsWith('.md') ? [full] : [];
  });
}
