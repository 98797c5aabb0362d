import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes a new SQL migration into db/migrations from db/schema.ts.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema.ts',
  out: './db/migrations',
});
