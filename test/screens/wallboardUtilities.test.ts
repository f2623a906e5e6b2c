// The wallboard's utility tiles (issue 26) on a fresh install with the built-in simulator: electricity, gas (m³ and
// kWh), water (m³) and the solar balance, today and this month, equal to GET /api/energy/commodities for the same
// days; a metered commodity without data reads as missing, never 0; the words follow the site's language; nothing
// clipped or overlapping at 1920×1080, 1080×1920, 390×844, 1280×720 (light theme), 768×1024 and 3840×2160 (screenshots for people to look at).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import type { CommodityFiguresView } from '../../src/energy/commodities.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { layoutProblems } from '../helpers/wallboardLayout.ts';

const shots = process.env.WALLBOARD_SHOTS ?? '/work/notes/wallboard-shots';
fs.mkdirSync(shots, { recursive: true });

let server: TestServer;
let admin: string;
let browser: Browser;
before(async () => {
  // One collection at start (backfilling the simulator's last week), then none for an hour: the figures hold still
  // while the page and the API are compared, and the data stays live.
  server = await startTestServer({ EMS_IOT_BASE_URL: 'sim', EMS_COLLECT_INTERVAL: '1h' });
  admin = (await server.createUser({ role: 'admin' })).accessToken;
  await eventually(async () => server.service.deps.collector.health().lastOkAt ?? undefined, 'the first collection', 90_000);
  // A heat meter added after the collection: metered, no data yet.
  const heat = await server.request('POST', '/api/meters', {
    token: admin,
    body: { name: 'District heat', code: 'meter.heat.kwh', kind: 'energy', commodity: 'heat' },
  });
  assert.equal(heat.status, 201, heat.text);
  // Gas and water priced (back-dated over the backfilled days): the month tile shows the all-utilities headline.
  const validFrom = addDays(`${siteDay(server.service.deps.energy.timezone()).slice(0, 7)}-01`, -10);
  for (const body of [
    { validFrom, commodity: 'gas', price: 0.09, carbonFactor: 0.202 },
    { validFrom, commodity: 'water', price: 4.2, carbonFactor: 0 },
  ]) {
    const tariff = await server.request('POST', '/api/energy/tariffs', { token: admin, body });
    assert.equal(tariff.status, 201, tariff.text);
  }
  assert.equal((await server.request('PUT', '/api/configs', { token: admin, body: { siteName: 'North Campus' } })).status, 200);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const today = () => siteDay(server.service.deps.energy.timezone());
const commodities = async (from: string, to: string): Promise<CommodityFiguresView> => {
  const response = await server.request<CommodityFiguresView>('GET', `/api/energy/commodities?from=${from}&to=${to}`, { token: admin });
  assert.equal(response.status, 200, response.text);
  return response.body;
};

async function open(viewport: { width: number; height: number }, query = ''): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.addInitScript({ content: 'window.__name = (f) => f;' });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${server.url}/wallboard${query}`);
  await page.waitForSelector('[data-field="powerKw"][data-value]');
  assert.deepEqual(problems, []);
  return page;
}

test('a tile per utility and the solar balance, today and this month, equal to /api/energy/commodities; no data is "–", not 0', async () => {
  const day = today();
  const [todayFigures, monthFigures] = [await commodities(day, addDays(day, 1)), await commodities(`${day.slice(0, 7)}-01`, addDays(day, 1))];
  const payload = (await server.request('GET', '/api/wallboard')).body;
  assert.ok(payload.utilities, 'a site with gas, water and PV has utilities');
  assert.equal(payload.labels.utilityToday, 'today');
  // Every commodity the API reports, in the same order and unit; heat is metered but has recorded nothing.
  assert.deepEqual(
    payload.utilities.today.commodities.map((c: any) => [c.commodity, c.unit]),
    todayFigures.commodities.map((c) => [c.commodity, c.unit]),
  );
  assert.deepEqual(
    payload.utilities.today.commodities.map((c: any) => c.commodity),
    ['electricity', 'gas', 'water', 'heat'],
  );
  for (const [period, figures] of [
    [payload.utilities.today, todayFigures],
    [payload.utilities.month, monthFigures],
  ] as const) {
    for (const entry of figures.commodities) {
      const shown = period.commodities.find((c: any) => c.commodity === entry.commodity);
      assert.deepEqual([shown.quantity, shown.kwh], [entry.quantity, entry.kwh], entry.commodity);
      if (entry.recordedDays === 0) assert.deepEqual([shown.quantity, shown.kwh], [null, null], `${entry.commodity}: no data is null`);
    }
    const e = figures.electricity;
    assert.deepEqual(period.solar, {
      generationKwh: e.generationKwh,
      exportKwh: e.exportKwh,
      selfConsumptionKwh: e.selfConsumptionKwh,
      selfConsumptionRate: e.selfConsumptionRate,
      selfSufficiency: e.selfSufficiency,
    });
  }
  const heatApi = todayFigures.commodities.find((c) => c.commodity === 'heat')!;
  assert.deepEqual([heatApi.quantity, heatApi.kwh, heatApi.cost, heatApi.recordedDays], [null, null, null, 0], 'no recorded day: null, not 0');
  const gasToday = todayFigures.commodities.find((c) => c.commodity === 'gas')!;
  assert.ok(gasToday.quantity! > 0 && gasToday.kwh! > gasToday.quantity! * 10, JSON.stringify(gasToday));
  // The backfilled week has sun (today may not yet: the run can be before sunrise).
  const week = await commodities(addDays(today(), -6), addDays(today(), 1));
  assert.ok(week.electricity.generationKwh! > 0, 'a November week has some sun');

  for (const [viewport, query] of [
    [{ width: 1920, height: 1080 }, ''],
    [{ width: 1080, height: 1920 }, ''],
    [{ width: 390, height: 844 }, ''],
    // The smallest landscape screen, on the light theme.
    [{ width: 1280, height: 720 }, '?theme=light'],
    [{ width: 768, height: 1024 }, ''],
    [{ width: 3840, height: 2160 }, ''],
  ] as const) {
    const page = await open(viewport, query);
    try {
      await page.waitForSelector('.utility[data-commodity="solar"]');
      const tiles = await page.$$eval('.utility', (nodes) =>
        nodes.map((node) => ({
          commodity: node.getAttribute('data-commodity'),
          title: node.querySelector('h2')!.textContent,
          value: node.querySelector('.num')!.getAttribute('data-value'),
          missing: node.querySelector('.num')!.hasAttribute('data-missing'),
          text: node.querySelector('.big')!.textContent,
          parts: Object.fromEntries([...node.querySelectorAll('.part')].map((part) => [part.getAttribute('data-part'), part.getAttribute('data-value')])),
        })),
      );
      assert.deepEqual(
        tiles.map((tile) => tile.commodity),
        ['electricity', 'gas', 'water', 'heat', 'solar'],
      );
      for (const tile of tiles.filter((t) => t.commodity !== 'solar')) {
        const api = todayFigures.commodities.find((c) => c.commodity === tile.commodity)!;
        const month = monthFigures.commodities.find((c) => c.commodity === tile.commodity)!;
        if (tile.commodity === 'heat') {
          assert.ok(tile.missing && tile.value === null, 'heat without data is missing');
          assert.equal(tile.text, 'No data');
          continue;
        }
        assert.equal(Number(tile.value), api.quantity, `${tile.commodity} today`);
        assert.match(tile.text!, new RegExp(`${tile.commodity === 'heat' ? 'kWh th' : api.unit}$`));
        assert.equal(tile.title, `${{ electricity: 'Electricity', gas: 'Gas', water: 'Water' }[tile.commodity!]}today`);
        assert.equal(Number(tile.parts.month), month.quantity, `${tile.commodity} month`);
        if (tile.commodity === 'gas') assert.equal(Number(tile.parts.kwh), api.kwh, 'gas kWh');
      }
      const solar = tiles.find((t) => t.commodity === 'solar')!;
      const e = todayFigures.electricity;
      // A share of nothing (before sunrise: no generation yet) is null and shows no figure.
      const num = (value: string | null | undefined) => (value === null || value === undefined || value === '' ? null : Number(value));
      assert.equal(num(solar.value), e.generationKwh);
      assert.equal(num(solar.parts.export), e.exportKwh);
      assert.equal(num(solar.parts.selfConsumptionRate), e.selfConsumptionRate);
      assert.equal(num(solar.parts.selfSufficiency), e.selfSufficiency);
      assert.equal(num(solar.parts.month), monthFigures.electricity.generationKwh);
      // With PV the site figures are the grid's, and say so.
      assert.equal(await page.textContent('.kpi h2'), 'Grid power now');
      // Beside the grid month: every utility's cost and carbon by scope, as the payload gives them (issue 41).
      const all = payload.utilities.month.allUtilities;
      assert.deepEqual(all.unpriced, []);
      assert.ok(all.scope1Kg > 0 && all.scope2Kg > 0 && all.costTotal > 0, JSON.stringify(all));
      assert.equal(Number(await page.getAttribute('[data-field="monthAllUtilities"]', 'data-value')), all.costTotal);
      assert.match((await page.textContent('[data-field="monthAllUtilities"]'))!, /^all utilities .+ kg CO₂ \(scope 1 .+ kg CO₂, scope 2 .+ kg CO₂\)$/);
      const oneScreen = viewport.width >= 700;
      // Nothing sticks out of its tile (a nowrap figure wider than a narrow tile would).
      const outside = await page.$$eval('.utility *', (nodes) =>
        nodes.flatMap((node) => {
          const tile = node.closest('.utility')!.getBoundingClientRect();
          const box = node.getBoundingClientRect();
          return box.left < tile.left - 1 || box.right > tile.right + 1 ? [`${node.textContent} sticks out of its tile`] : [];
        }),
      );
      const found = [...outside, ...(await page.evaluate(layoutProblems, oneScreen))];
      const file = path.join(shots, `utilities-${query ? 'light-' : ''}${viewport.width}x${viewport.height}.png`);
      await page.screenshot({ path: file, fullPage: !oneScreen });
      assert.deepEqual(found, [], `${viewport.width}×${viewport.height} (${file})`);
    } finally {
      await page.close();
    }
  }
});

test('the words follow the site language (de, fr, es); an area view shows no site utilities', async () => {
  try {
    for (const [locale, title, grid] of [
      ['de-DE', 'Gasheute', 'Netzbezug jetzt'],
      ['fr-FR', 'Gazaujourd’hui', 'Puissance réseau actuelle'],
      ['es-ES', 'Gashoy', 'Potencia de red actual'],
    ] as const) {
      assert.equal((await server.request('PUT', '/api/configs', { token: admin, body: { locale } })).status, 200);
      const page = await open({ width: 1920, height: 1080 });
      try {
        await page.waitForSelector('.utility[data-commodity="gas"]');
        assert.equal((await page.textContent('.utility[data-commodity="gas"] h2'))!.replace("'", '’'), title);
        assert.equal(
          await page.textContent('.utility[data-commodity="heat"] .num'),
          { 'de-DE': 'Keine Daten', 'fr-FR': 'Aucune donnée', 'es-ES': 'Sin datos' }[locale],
        );
        assert.equal(await page.textContent('.kpi h2'), grid);
        assert.equal(await page.getAttribute('html', 'lang'), locale);
        if (locale === 'de-DE') {
          // German figures: a decimal comma.
          const gas = await page.getAttribute('.utility[data-commodity="gas"] .num', 'data-value');
          const text = (await page.textContent('.utility[data-commodity="gas"] .num'))!;
          if (Number(gas) < 1000 && !Number.isInteger(Number(gas))) assert.match(text, /,\d$/);
          await page.screenshot({ path: path.join(shots, 'utilities-de-1920x1080.png') });
        }
        assert.deepEqual(await page.evaluate(layoutProblems, true), [], locale);
      } finally {
        await page.close();
      }
    }
  } finally {
    await server.request('PUT', '/api/configs', { token: admin, body: { locale: 'en-US' } });
  }
  const area = (await server.request('GET', '/api/wallboard?area=HVAC')).body;
  assert.equal(area.utilities, null);
  const page = await open({ width: 1280, height: 720 }, '?area=HVAC');
  try {
    assert.equal(await page.isVisible('.utilities'), false);
  } finally {
    await page.close();
  }
});
