// Headless Chromium for the tests that look at pages (the wallboard, the reference page) and the wallboard benchmark:
// Debian's chromium through playwright-core, with what would reach beyond the box (QUIC, updates, sync, background
// requests) switched off.
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** CHROMIUM_PATH, else Debian's chromium (or chromium-browser on older releases). */
export function chromiumPath(): string {
  const found = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
  if (!found) throw new Error('Debian chromium must be installed (.ci/run installs it), or CHROMIUM_PATH name another');
  return found;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ARGS });
}
