import { chromium } from 'playwright-core';
import { startTestServer } from '../helpers/server.ts';
const server = await startTestServer();
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
await page.goto(server.url + '/');
await page.waitForSelector('[data-field="powerKw"][data-value]');
console.log(await page.evaluate(() => {
  const d = new Date('2026-11-17T12:00:00Z').toLocaleDateString('en', { weekday: 'short', day: 'numeric', timeZone: 'UTC' });
  const l = document.querySelector('.bar-label')!;
  l.textContent = d;
  return [d, l.scrollWidth, l.clientWidth, getComputedStyle(l).fontSize];
}));
await browser.close(); await server.close();
