// The fleet service's PostgreSQL schema (src/fleet): `npx drizzle-kit generate --config drizzle.fleet.config.ts`.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/fleet/schema.ts',
  out: './src/fleet/migrations',
});
