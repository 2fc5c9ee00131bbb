// Where the suite's time goes: each file's time (its hooks, set-up included) and its slowest test,
// printed for the slowest files at the end of the run; with DURATIONS_JSON=<file> every file is written
// there too (to compare two runs). Next to the default reporter:
//   pnpm vitest run --reporter=default --reporter=./test/support/durations-reporter.ts
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

interface FileTime {
  file: string;
  ms: number;
  tests: { name: string; ms: number }[];
}

const SHOWN = 20;

export default class DurationsReporter implements Reporter {
  private files: FileTime[] = [];

  onTestModuleEnd(module: TestModule): void {
    const tests = [...module.children.allTests()].map((t) => ({
      name: t.fullName,
      ms: Math.round(t.diagnostic()?.duration ?? 0),
    }));
    this.files.push({
      file: path.relative(process.cwd(), module.moduleId),
      ms: Math.round(module.diagnostic().duration),
      tests: tests.sort((a, b) => b.ms - a.ms),
    });
  }

  onTestRunEnd(): void {
    const files = this.files.sort((a, b) => b.ms - a.ms);
    const total = files.reduce((sum, f) => sum + f.ms, 0);
    const s = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
    console.log(
      `\nfile time: ${s(total)} s in ${files.length} files; the ${SHOWN} slowest, with their slowest test:`,
    );
    for (const f of files.slice(0, SHOWN)) {
      const slowest = f.tests[0];
      console.log(
        `${s(f.ms)} s  ${f.file}${slowest ? `  (${s(slowest.ms).trim()} s: ${slowest.name.slice(0, 80)})` : ''}`,
      );
    }
    if (process.env.DURATIONS_JSON) writeFileSync(process.env.DURATIONS_JSON, JSON.stringify(files, null, 1));
  }
}
