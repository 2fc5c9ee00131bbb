// Pool workers run the TypeScript sources. A worker does not inherit the module hooks of a parent
// started under vitest or a bundler-free runtime, so it registers tsx for its own thread first.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
