// The staff app's build (npm run build:web): src/web/app → dist/web, hashed files under /app-assets/ (cached for a
// year by src/web/serve.ts), no inline script or style (the CSP forbids both), every screen its own chunk.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: path.join(here, 'app'),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(here, '..', '..', 'dist', 'web'),
    emptyOutDir: true,
    assetsDir: 'app-assets',
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: true,
    sourcemap: false,
    reportCompressedSize: false,
    // Rolldown's "plugins took significant time" block is about build speed on a busy machine, not a problem with the
    // app; a newcomer reads the yellow block as one (issue 58).
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
});
