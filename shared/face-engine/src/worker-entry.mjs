// Pool workers run the TypeScript sources. A worker process is forked without the parent's loader
// flags (a test runner's, a profiler's), so it registers tsx for itself first.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
