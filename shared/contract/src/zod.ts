// The one zod instance of the project, extended with `.openapi()` metadata so every schema
// can document itself. Import `z` from here, never from 'zod' directly.
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };
