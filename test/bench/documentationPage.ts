// How long /documentation takes to show its first operation in headless Chromium: from navigation to the first
// operation block on screen, median of RUNS page loads, beside a same-run baseline (the wallboard page's first figure,
// a page of this server whose cost does not change with the reference), printed as a ratio.
// Run: node --import tsx test/bench/documentationPage.ts
import { launchChromium } from '../helpers/chromium.ts';
import { startTestServer } from '../helpers/server.ts';

const RUNS = Number(process.env.RUNS ?? 5);
const server = await startTestServer();
const browser = await launchChromium();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function timeTo(url: string, selector: string): Promise<number> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const started = performance.now();
  await page.goto(url);
  await page.waitForSelector(selector, { timeout: 120_000 });
  const ms = performance.now() - started;
  await context.close();
  return ms;
}

try {
  const reference: number[] = [];
  const baseline: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // Interleaved, so both see the same load on the box.
    reference.push(await timeTo(`${server.url}/documentation`, '.opblock'));
    baseline.push(await timeTo(`${server.url}/`, '[data-field="powerKw"][data-value]'));
  }
  const doc = median(reference);
  const base = median(baseline);
  console.log(`first operation on /documentation: median ${doc.toFixed(0)} ms (runs ${reference.map((ms) => ms.toFixed(0)).join(', ')})`);
  console.log(`baseline, the wallboard's first figure: median ${base.toFixed(0)} ms`);
  console.log(`ratio reference / baseline: ${(doc / base).toFixed(2)}`);
} finally {
  await browser.close();
  await server.close();
}
