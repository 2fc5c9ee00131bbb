export { z } from './zod.js';
export * from './common.js';
export * from './errors.js';
export * from './health.js';
