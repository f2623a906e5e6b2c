// Wallboard weight and time to first figures in headless Chromium, against a plain static page of the same size
// served by bare node:http in the same run (the ratio is the figure; absolute times move with the machine).
// The weight is counted with 60 areas and 40 active alerts, the heaviest payload a lobby screen is likely to get.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestServer } from '../helpers/server.ts';

const ROUNDS = 7;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const server = await startTestServer();
const admin = (await server.createUser({ role: 'admin' })).accessToken;
const areas = Array.from({ length: 60 }, (_, i) => ({
  name: `Area ${i}`,
  todayKwh: 1000 + i * 13.7,
  monthKwh: 20000 + i * 101.3,
  yearKwh: 250000,
  powerKw: 40 + i,
}));
await server.request('PUT', '/api/energy/areas', { token: admin, body: { areas } });
for (let i = 0; i < 40; i += 1)
  await server.request('POST', '/api/alerts', {
    token: admin,
    body: { title: `Sensor ${i} lost contact`, level: i % 3 ? 'warning' : 'critical', message: 'x' },
  });
const LIMIT = 50_000;
const browser = await launchChromium();
try {
  // Bytes over the wire: a first visit, then a revalidating one (what a wall screen pays on each reload).
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (event: { encodedDataLength: number }) => (bytes += event.encodedDataLength));
  await page.goto(`${server.url}/wallboard`);
  await page.waitForSelector('.bar-col');
  const first = bytes;
  bytes = 0;
  await page.reload();
  await page.waitForSelector('.bar-col');
  const revisit = bytes;
  await context.close();

  // The same number of bytes as a static page, served bare: what "a page this size" costs here.
  const filler = 'x'.repeat(Math.max(0, first - 300));
  const bare = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html><body><p id="done">ok</p><!--${filler}--></body></html>`);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

  const wallboard: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [url, selector, into] of [
      [`${server.url}/wallboard`, '[data-field="powerKw"][data-value]', wallboard],
      [bareUrl, '#done', baseline],
    ] as const) {
      const fresh = await browser.newContext();
      const tab = await fresh.newPage();
      await tab.goto(url, { waitUntil: 'commit' });
      await tab.waitForSelector(selector);
      into.push(await tab.evaluate(() => performance.now()));
      await fresh.close();
    }
  }
  bare.close();
  const w = median(wallboard);
  const b = median(baseline);
  console.log(
    `wallboard bytes over the wire (headers included): first visit ${first} B (limit ${LIMIT} B: ${first <= LIMIT ? 'within' : 'OVER'}), revalidating reload ${revisit} B`,
  );
  console.log(
    `time to first figures (median of ${ROUNDS}, fresh context each): wallboard ${w.toFixed(0)} ms, static page of the same size ${b.toFixed(0)} ms, ratio ${(w / b).toFixed(2)}`,
  );
} finally {
  await browser.close();
  await server.close();
}
