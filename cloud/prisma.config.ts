// Prisma CLI configuration. The application does not read it: it opens the database itself
// (src/infra/db) and applies migrations with its own runner. The datasource URL is only needed by
// online CLI commands such as `prisma migrate deploy` / `migrate status`.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
});
