export { z } from './zod.js';
export * from './common.js';
export * from './errors.js';
export * from './health.js';
export * from './auth.js';
export * from './applications.js';
export * from './tenants.js';
export * from './events.js';
