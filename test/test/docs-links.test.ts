// Every link between the repository's Markdown pages leads somewhere: a relative link names a file or
// folder that exists, and its `#anchor` (or an in-page `#anchor`) names a heading of that page, spelled
// the way GitHub makes heading anchors. Links to the web are not fetched (no network here).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownFiles, ROOT } from './markdown-pages.js';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

/** The links of a page outside code: `[text](target)`, with the line they are on. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

describe('documentation links', () => {
  const files = markdownFiles(ROOT);
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchorCache.get(file)!;
  };

  it('finds the pages to check', () => {
    expect(files.map((f) => path.relative(ROOT, f))).toEqual(
      expect.arrayContaining(['README.md', 'docs/README.md', 'docs/integrators/README.md']),
    );
  });

  it('has no broken link between pages or to a heading', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const { target, line } of linksOf(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [rawPath, anchor] = target.split('#') as [string, string | undefined];
        const where = `${path.relative(ROOT, file)}:${line} -> ${target}`;
        const resolved = rawPath ? path.resolve(path.dirname(file), decodeURIComponent(rawPath)) : file;
        let isFile = false;
        try {
          isFile = statSync(resolved).isFile();
        } catch {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (
          anchor &&
          isFile &&
          resolved.endsWith('.md') &&
          !anchors(resolved).has(decodeURIComponent(anchor))
        ) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('can see a broken link (the checker is not blind)', () => {
    expect(anchorsOf('# Two words\n## Two words\n### `code` and [a link](x.md)')).toEqual(
      new Set(['two-words', 'two-words-1', 'code-and-a-link']),
    );
    expect(linksOf('[a](b.md#c) `[d](e.md)`\n```\n[f](g.md)\n```').map((l) => l.target)).toEqual(['b.md#c']);
  });
});
