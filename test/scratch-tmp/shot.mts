import { chromium } from 'playwright-core';
import { startTestServer } from '../helpers/server.ts';
const server = await startTestServer();
const admin = (await server.createUser({ role: 'admin' })).accessToken;
const n = Number(process.env.N ?? 60);
const areas = Array.from({ length: n }, (_, i) => ({ name: i % 7 === 3 ? `Building ${i} east wing ventilation and heat recovery` : `Area ${i}`, todayKwh: 123456.7 - i * 1500, monthKwh: 987654.3 - i * 9000, yearKwh: 9999999, powerKw: 4567.8 - i * 50 }));
console.log((await server.request('PUT', '/api/energy/areas', { token: admin, body: { areas } })).status);
for (const [t, l] of [['Chiller 2 trip on high pressure', 'critical'], ['Boiler lockout', 'critical'], ['AHU-3 filter differential pressure high', 'warning'], ['Supply air temperature deviation', 'warning']]) await server.request('POST', '/api/alerts', { token: admin, body: { title: t, level: l, area: 'Area 1', occurredAt: new Date(Date.now() - Math.random() * 9e7).toISOString() } });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
page.on('console', (m) => console.log('console', m.type(), m.text()));
page.on('pageerror', (e) => console.log('pageerror', e.message));
await page.goto(server.url + '/' + (process.env.Q ?? ''));
await page.waitForSelector('[data-field="powerKw"][data-value]');
for (const [w, h] of [[1920, 1080], [390, 844], [768, 1024], [1280, 720], [3840, 2160]]) {
  await page.setViewportSize({ width: w, height: h });
  await page.waitForTimeout(400);
  await page.screenshot({ path: `/tmp/wbscratch/s-${w}x${h}.png`, fullPage: true });
}
await browser.close();
await server.close();
