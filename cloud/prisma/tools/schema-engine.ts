// Prisma's schema engine compiled to WASM (dev/test only). The native engine the Prisma CLI wants
// cannot be downloaded here, but this build diffs schemas and databases through a driver adapter.
// @prisma/schema-engine-wasm is an internal, bundler-targeted package: its entry imports the .wasm
// file as an ES module, which Node refuses, so the module is instantiated by hand.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { DiffTarget } from '@prisma/schema-engine-wasm';

// lib ES2023 without DOM types does not declare the WebAssembly global Node provides.
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, unknown>) => { exports: Record<string, unknown> };
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

let instantiated = false;

function instantiate(): void {
  if (instantiated) return;
  const require = createRequire(import.meta.url);
  const wasmFile = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg').replace(/\.js$/, '.wasm');
  const instance = new wasm.Instance(new wasm.Module(readFileSync(wasmFile)), {
    './schema_engine_bg.js': bindings,
  });
  bindings.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start(): void }).__wbindgen_start();
  instantiated = true;
}

export type SchemaSource =
  /** No schema at all. */
  | { kind: 'empty' }
  /** The models of a schema.prisma file. */
  | { kind: 'schema'; path: string }
  /** The live database behind the adapter given to diff(). */
  | { kind: 'database' };

function target(source: SchemaSource, schemaPath: string): DiffTarget {
  switch (source.kind) {
    case 'empty':
      return { tag: 'empty' };
    case 'schema':
      return {
        tag: 'schemaDatamodel',
        files: [{ path: source.path, content: readFileSync(source.path, 'utf8') }],
      };
    case 'database':
      return {
        tag: 'schemaDatasource',
        files: [{ path: schemaPath, content: readFileSync(schemaPath, 'utf8') }],
        configDir: '.',
      };
  }
}

export interface DiffResult {
  /** True when the two sides have the same schema. */
  empty: boolean;
  /** SQL that turns `from` into `to` ("-- This is an empty migration." when empty). */
  sql: string;
}

/**
 * SQL that turns `from` into `to`. The engine connects through `adapter` even when neither side is
 * the database; a `{ kind: 'database' }` side reads that database.
 */
export async function diff(options: {
  from: SchemaSource;
  to: SchemaSource;
  schemaPath: string;
  adapter: SqlMigrationAwareDriverAdapterFactory;
}): Promise<DiffResult> {
  instantiate();
  const adapter = bindMigrationAwareSqlAdapterFactory(options.adapter);
  const engine = await bindings.SchemaEngine.new(
    { datamodels: [[options.schemaPath, readFileSync(options.schemaPath, 'utf8')]] },
    () => {},
    adapter,
  );
  try {
    const result = await engine.diff({
      from: target(options.from, options.schemaPath),
      to: target(options.to, options.schemaPath),
      script: true,
      exitCode: true,
      filters: { externalTables: [], externalEnums: [] },
    });
    return { empty: result.exitCode === 0, sql: result.stdout ?? '' };
  } finally {
    engine.free();
  }
}
