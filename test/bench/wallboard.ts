// Wallboard weight and time to first figures in headless Chromium, against a plain static page of the same size
// served by bare node:http in the same run (the ratio is the figure; absolute times move with the machine).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { startTestServer } from '../helpers/server.ts';

const ROUNDS = 7;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const server = await startTestServer();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  // Bytes over the wire: a first visit, then a revalidating one (what a wall screen pays on each reload).
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (event: { encodedDataLength: number }) => (bytes += event.encodedDataLength));
  await page.goto(`${server.url}/`);
  await page.waitForSelector('.chart canvas');
  const first = bytes;
  bytes = 0;
  await page.reload();
  await page.waitForSelector('.chart canvas');
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
    for (const [url, selector, into] of [[`${server.url}/`, '[data-field="powerKw"][data-value]', wallboard], [bareUrl, '#done', baseline]] as const) {
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
  console.log(`wallboard bytes over the wire: first visit ${first} B, revalidating reload ${revisit} B`);
  console.log(`time to first figures (median of ${ROUNDS}, fresh context each): wallboard ${w.toFixed(0)} ms, static page of the same size ${b.toFixed(0)} ms, ratio ${(w / b).toFixed(2)}`);
} finally {
  await browser.close();
  await server.close();
}
