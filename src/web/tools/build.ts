// Builds the staff app into dist/web (vite, a few seconds). `--if-stale` (npm's prestart) builds only when
// dist/web/index.html is missing or older than a file of the app's sources, so `npm ci && npm start` serves the app
// on a fresh clone and a later start costs one directory walk.
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../platform/packageRoot.ts';

const WEB = path.join(packageRoot, 'src', 'web');
export const WEB_DIST = path.join(packageRoot, 'dist', 'web');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

export function webBuildIsStale(): boolean {
  const index = path.join(WEB_DIST, 'index.html');
  if (!fs.existsSync(index)) return true;
  const sources = Math.max(newestSource(path.join(WEB, 'app')), fs.statSync(path.join(WEB, 'vite.config.ts')).mtimeMs);
  return fs.statSync(index).mtimeMs < sources;
}

export async function buildWeb(): Promise<void> {
  const { build } = await import('vite');
  await build({ configFile: path.join(WEB, 'vite.config.ts') });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--if-stale') && !webBuildIsStale()) process.exit(0);
  const started = performance.now();
  await buildWeb();
  console.log(`staff app built into dist/web in ${Math.round(performance.now() - started)} ms`);
}
