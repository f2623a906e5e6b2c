#!/usr/bin/env node
// emsctl launcher: the compiled CLI in production (NODE_ENV=production or no TS source), the TS source through tsx in a checkout.
import { existsSync } from 'node:fs';

const source = new URL('./emsctl.ts', import.meta.url);
const compiled = new URL('../dist/cli/emsctl.js', import.meta.url);
const useCompiled = existsSync(compiled) && (process.env.NODE_ENV === 'production' || !existsSync(source));

if (useCompiled) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
}
