// The staff app's Lighthouse scores (npm run bench:web): performance and accessibility of the overview and the alerts
// work-list, signed in, against Debian's Chromium, with the mobile defaults (simulated slow 4G, 4× CPU slowdown) and
// the desktop preset; targets ≥ 90 and ≥ 95. Then the built bundle: each file's gzipped size and the first screen's
// JS + CSS (entry, its preloads, the overview chunk and its CSS) against the 120 KiB budget.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { chromium } from 'playwright-core';
import { WEB_DIST } from '../../src/web/serve.ts';
import { buildWeb, webBuildIsStale } from '../../src/web/tools/build.ts';
import { chromiumPath } from '../helpers/chromium.ts';
import { seedYear } from '../helpers/seededYear.ts';
import { startTestServer } from '../helpers/server.ts';

if (webBuildIsStale()) await buildWeb();
const server = await startTestServer();
seedYear(server, 'UTC', { subMeters: 4, days: 40 });
const fm = await server.createUser({ role: 'operator', username: 'bench' });
for (let i = 0; i < 30; i += 1)
  await server.request('POST', '/api/alerts', {
    token: fm.accessToken,
    body: {
      title: `Sensor ${i} lost contact`,
      level: i % 3 ? 'warning' : 'critical',
      message: 'The gateway has not heard from it for 15 minutes',
      area: `Area ${i % 4}`,
    },
  });

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-lighthouse-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath(),
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--remote-debugging-port=0'],
});
const targets = { performance: 90, accessibility: 95 };
let missed = 0;
try {
  // Sign in once: the refresh token stays in this profile's localStorage, so each audited load resumes the session.
  const page = await context.newPage();
  await page.goto(`${server.url}/login`);
  await page.locator('input[name="username"]').fill('bench');
  await page.locator('input[name="password"]').fill(fm.password);
  await page.keyboard.press('Enter');
  await page.getByRole('navigation').waitFor();
  const port = Number(fs.readFileSync(path.join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]);
  console.log('screen     preset   performance  accessibility  LCP ms  TBT ms');
  for (const [screen, url] of [
    ['overview', `${server.url}/`],
    ['alerts', `${server.url}/alerts`],
  ] as const) {
    for (const [preset, config] of [
      ['mobile', undefined],
      ['desktop', desktopConfig],
    ] as const) {
      const result = await lighthouse(
        url,
        { port, output: 'json', logLevel: 'error', onlyCategories: ['performance', 'accessibility'], disableStorageReset: true },
        config,
      );
      const lhr = result!.lhr;
      const performance = Math.round((lhr.categories.performance.score ?? 0) * 100);
      const accessibility = Math.round((lhr.categories.accessibility.score ?? 0) * 100);
      if (performance < targets.performance || accessibility < targets.accessibility) missed += 1;
      const lcp = Math.round(lhr.audits['largest-contentful-paint'].numericValue ?? 0);
      const tbt = Math.round(lhr.audits['total-blocking-time'].numericValue ?? 0);
      console.log(
        `${screen.padEnd(10)} ${preset.padEnd(8)} ${String(performance).padStart(11)}  ${String(accessibility).padStart(13)}  ${String(lcp).padStart(6)}  ${String(tbt).padStart(6)}`,
      );
      for (const audit of Object.values(lhr.audits))
        if (audit.score !== null && audit.score < 1 && lhr.categories.accessibility.auditRefs.some((ref) => ref.id === audit.id))
          console.log(`  a11y: ${audit.id}: ${audit.title}`);
    }
  }
} finally {
  await context.close();
  await server.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

const assets = path.join(WEB_DIST, 'app-assets');
const sizes = new Map(fs.readdirSync(assets).map((name) => [name, gzipSync(fs.readFileSync(path.join(assets, name)), { level: 9 }).length]));
const index = fs.readFileSync(path.join(WEB_DIST, 'index.html'), 'utf8');
const entry = [...index.matchAll(/\/app-assets\/([^"]+)/g)].map((m) => m[1]);
const overview = [...sizes.keys()].filter((name) => /^(Overview|Field|useApi)-/.test(name));
const first = [...entry, ...overview].reduce((sum, name) => sum + (sizes.get(name) ?? 0), 0);
console.log(`\nbundle (gzip -9): ${[...sizes].map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(1)}`).join(', ')} KiB`);
console.log(`first screen JS+CSS: ${(first / 1024).toFixed(1)} KiB gzipped of the 120 KiB budget (${[...entry, ...overview].length} files)`);
console.log(`all screens: ${([...sizes.values()].reduce((a, b) => a + b, 0) / 1024).toFixed(1)} KiB gzipped`);
console.log(missed ? `${missed} audit(s) below the targets (performance ≥ 90, accessibility ≥ 95)` : 'every audit met the targets');
