#!/usr/bin/env node
// emsctl launcher: the TS source through tsx in a development checkout, the compiled CLI everywhere else (a release,
// which ships no sources; an install pruned of its development dependencies; NODE_ENV=production).
import { existsSync } from 'node:fs';

const source = new URL('./emsctl.ts', import.meta.url);
const compiled = new URL('../dist/cli/emsctl.js', import.meta.url);

function tsxInstalled() {
  try {
    import.meta.resolve('tsx/esm/api');
    return true;
  } catch {
    return false;
  }
}

const fromSource = existsSync(source) && process.env.NODE_ENV !== 'production' && tsxInstalled();

if (fromSource || !existsSync(compiled)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(compiled.href);
}
