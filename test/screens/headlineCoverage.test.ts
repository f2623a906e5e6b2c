// Coverage beside the headline figures (issue 41, item 8): a site whose meters' history was imported and whose
// collection is off is not "live", and its month figure says what share of the month's intervals it rests on, in the
// API (overview and wallboard) and on the wallboard page (rendered in Chromium). Known answer: every interval of the
// month's days before today stored, none today, so the month's share = stored ÷ (stored + today's intervals begun so far).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { addDays, dayIntervals, INTERVAL_MS, siteDay } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const shots = process.env.WALLBOARD_SHOTS ?? '/work/notes/wallboard-shots';

describe('headline coverage on a site with imported history and collection off', () => {
  let server: TestServer;
  let token: string;
  const today = siteDay('UTC', new Date());
  const monthStart = `${today.slice(0, 7)}-01`;
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const { energy, db } = server.service.deps;
    const main = energy.meters.create({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id;
    for (let day = addDays(monthStart, -3); day < today; day = addDays(day, 1)) {
      const { start, count } = dayIntervals('UTC', day);
      const rows: DayRecord[] = [{ meterId: main, day, start, kwh: new Float32Array(count).fill(1), flags: new Uint8Array(count), maxKw: null }];
      db.sqlite.transaction(() => energy.store.save(rows))();
    }
  });
  after(() => server?.close());

  /** The month's share by hand at `at`: its stored intervals over them plus today's begun ones (the running one counts). */
  const expectedShare = (at: number) => {
    const stored = ((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${monthStart}T00:00:00Z`)) / INTERVAL_MS) | 0;
    const todays = Math.ceil((at - Date.parse(`${today}T00:00:00Z`)) / INTERVAL_MS);
    return stored + todays > 0 ? stored / (stored + todays) : null;
  };

  test('the API: not live (collection off), coverage today 0 and the month its share; the page shows both', async (t) => {
    const t0 = Date.now();
    const wallboard = (await server.request('GET', '/api/wallboard', { token })).body;
    const stats = (await server.request('GET', '/api/overview/stats', { token })).body;
    const t1 = Date.now();
    t.diagnostic(
      `dataState ${JSON.stringify(wallboard.dataState)}; figures ${JSON.stringify(wallboard.figures)}; overview coverage ${JSON.stringify(stats.coverage)}`,
    );
    assert.equal(wallboard.dataState.state, 'stale');
    assert.equal(wallboard.dataState.reason, 'collection-off');
    assert.equal(wallboard.dataState.source, 'meters');
    const shares = [expectedShare(t0), expectedShare(t1)].map((v) => (v === null ? null : Math.round(v * 10_000) / 10_000));
    assert.ok(shares.includes(stats.coverage.month), `month ${stats.coverage.month} vs ${shares}`);
    assert.equal(wallboard.figures.coverageMonth, stats.coverage.month);
    if (t0 > Date.parse(`${today}T00:00:00Z`)) assert.equal(stats.coverage.today, 0, 'today: nothing stored');

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
      await page.goto(`${server.url}/wallboard`);
      await page.waitForSelector('body.is-stale');
      const banner = await page.textContent('[data-field="bannerText"]');
      assert.match(banner ?? '', /meter collection is off/);
      const month = await page.textContent('[data-field="monthCoverage"]');
      if (stats.coverage.month !== null && stats.coverage.month < 1)
        assert.match(month ?? '', new RegExp(`data for ${Math.round(stats.coverage.month * 100)} % of the period`));
      fs.mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: path.join(shots, 'collection-off-1920x1080.png') });
    } finally {
      await browser.close();
    }
  });
});
