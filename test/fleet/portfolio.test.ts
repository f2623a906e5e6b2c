// The portfolio API over real HTTP on a real PostgreSQL: health per site ("connected" is not health), the EUI ranking
// with last year's comparison, one alert list across sites, a site's meters, and who may see what.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addUser } from '../../src/fleet/app.ts';
import { revokeSite } from '../../src/fleet/enrolment.ts';
import { byGrade, euiPage, euiRanking, gradeOf, siteHealth, siteHealthPage } from '../../src/fleet/portfolio.ts';
import { SITE_LOCK } from '../../src/fleet/ingest.ts';
import { keptEuiPage } from '../../src/fleet/portfolioKept.ts';
import { keepEuiCurrent } from '../../src/fleet/upkeep.ts';
import type { Batch } from '../../src/fleet/schemas.ts';
import { adminToken, enrolSite, type FleetInstance, getJson, intervalBatch, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
});
after(async () => {
  await fleet?.close();
  cluster?.destroy();
});

/** Day rollups for meter '1' (electricity, site total) and '2' (gas in kWh here) from `from` for `count` days. */
function dayBatch(after: number, fromDay: string, count: number, perDay: { electricity: number; gas: number }, floorAreaM2: number | null): Batch {
  const days: NonNullable<Batch['days']> = [];
  let seq = after;
  const start = Date.parse(`${fromDay}T00:00:00Z`);
  for (let i = 0; i < count; i++) {
    const day = new Date(start + i * 86_400_000).toISOString().slice(0, 10);
    days.push({ meter: '1', day, value: perDay.electricity, cost: perDay.electricity * 0.3, carbonKg: perDay.electricity * 0.4, seq: ++seq });
    days.push({ meter: '2', day, value: perDay.gas, cost: perDay.gas * 0.1, carbonKg: perDay.gas * 0.2, seq: ++seq });
  }
  return {
    sentAt: new Date().toISOString(),
    after,
    through: seq,
    site: { name: 'x', timezone: 'UTC', floorAreaM2 },
    meters: [
      { key: '1', name: 'Main', commodity: 'electricity', unit: 'kWh', area: null, siteTotal: true },
      { key: '2', name: 'Boiler', commodity: 'gas', unit: 'kWh', area: null, siteTotal: true },
      { key: '3', name: 'Water', commodity: 'water', unit: 'kWh', area: null, siteTotal: true },
    ],
    days,
  };
}

function monthsAgo(months: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months, 1)).toISOString().slice(0, 10);
}

test('EUI ranking: kWh/m²·year over the last 12 complete months, per commodity and all fuels, against the year before', async () => {
  const admin = await adminToken(fleet.db);
  const high = await enrolSite(fleet, 'High');
  const low = await enrolSite(fleet, 'Low');
  const noArea = await enrolSite(fleet, 'No area');
  // 24 months of days: this year 100 kWh/day electricity + 50 gas; the year before 80 + 50. 1,000 m².
  const sendYears = async (
    site: { credential: string },
    cur: { electricity: number; gas: number },
    prev: { electricity: number; gas: number },
    area: number | null,
  ) => {
    let after = 0;
    for (let m = 24; m >= 1; m--) {
      const from = monthsAgo(m);
      const days = Math.round((Date.parse(monthsAgo(m - 1)) - Date.parse(from)) / 86_400_000);
      const batch = dayBatch(after, from, days, m > 12 ? prev : cur, area);
      const response = await sendBatch(fleet.url, site.credential, batch);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      after = batch.through;
    }
  };
  await sendYears(high, { electricity: 100, gas: 50 }, { electricity: 80, gas: 50 }, 1000);
  await sendYears(low, { electricity: 10, gas: 0 }, { electricity: 10, gas: 0 }, 2000);
  await sendYears(noArea, { electricity: 10, gas: 0 }, { electricity: 10, gas: 0 }, null);
  const yearDays = Math.round((Date.parse(monthsAgo(0)) - Date.parse(monthsAgo(12))) / 86_400_000);
  const prevDays = Math.round((Date.parse(monthsAgo(12)) - Date.parse(monthsAgo(24))) / 86_400_000);

  const { status, body } = await getJson(`${fleet.url}/api/fleet/eui`, admin);
  assert.equal(status, 200);
  const names = body.items.map((r: { name: string }) => r.name);
  assert.deepEqual(names.slice(0, 2), ['High', 'Low'], 'the names given at enrolment stay: the boxes calling themselves "x" rename nothing');
  assert.equal(
    (await fleet.db.pool.query('select box_name from sites where id = $1', [high.siteId])).rows[0].box_name,
    'x',
    "the box's own name is kept beside",
  );
  const first = body.items[0];
  assert.equal(first.id, high.siteId, 'the most intensive site leads');
  assert.equal(first.rank, 1);
  assert.ok(Math.abs(first.eui - (150 * yearDays) / 1000) < 1e-6);
  assert.ok(Math.abs(first.euiLastYear - (130 * prevDays) / 1000) < 1e-6);
  assert.ok(Math.abs(first.byCommodity.electricity.eui - (100 * yearDays) / 1000) < 1e-6);
  assert.ok(Math.abs(first.byCommodity.gas.eui - (50 * yearDays) / 1000) < 1e-6);
  assert.ok(Math.abs(first.change - ((150 * yearDays) / (130 * prevDays) - 1)) < 1e-9);
  assert.equal(body.items[1].id, low.siteId);
  assert.ok(Math.abs(body.items[1].eui - (10 * yearDays) / 2000) < 1e-6);
  const unranked = body.items.find((r: { id: string }) => r.id === noArea.siteId);
  assert.equal(unranked.rank, null);
  assert.equal(unranked.eui, null);

  // A restated month moves the figure: the site re-sends one day with a higher sequence.
  const restate = dayBatch(10_000, monthsAgo(1), 1, { electricity: 1100, gas: 50 }, 1000);
  assert.equal((await sendBatch(fleet.url, high.credential, restate)).status, 200);
  const again = await getJson(`${fleet.url}/api/fleet/eui`, admin);
  assert.ok(Math.abs(again.body.items[0].byCommodity.electricity.kwh - (100 * yearDays + 1000)) < 1e-6);

  // The page is ranked and cut in SQL; euiRanking (the export's whole list) works the same rules out in code: they agree
  // on every row and figure (to 12 digits: the sums may add in another order).
  const digits = (rows: unknown) => JSON.parse(JSON.stringify(rows, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));
  const page = (await getJson(`${fleet.url}/api/fleet/eui?pageSize=500`, admin)).body;
  const rules = await euiRanking(fleet.db.pool, null);
  assert.ok(rules[0]!.euiLastYear !== null && Object.keys(rules[0]!.byCommodity).length === 2, 'the rows have figures to compare');
  assert.deepEqual(digits(page.items), digits(rules));
  assert.deepEqual([page.total, page.maxEui], [3, rules[0]!.eui]);
});

test('site health: last contact, sync lag, unsent rows, version, backup age, completeness; a silent site is stale', async () => {
  const admin = await adminToken(fleet.db);
  const live = await enrolSite(fleet, 'Live');
  const silent = await enrolSite(fleet, 'Silent');
  const batch = intervalBatch({ after: 0, from: quarterAgo(4), count: 4 });
  batch.health = { version: '1.2.3', collector: 'ok', gateway: 'reachable', lastBackupAt: new Date(Date.now() - 7200_000).toISOString(), unsentRows: 3 };
  assert.equal((await sendBatch(fleet.url, live.credential, batch)).status, 200);
  const old = intervalBatch({ after: 0, from: quarterAgo(4 * 24 * 2), count: 4 });
  assert.equal((await sendBatch(fleet.url, silent.credential, old)).status, 200);
  const { body } = await getJson(`${fleet.url}/api/fleet/sites`, admin);
  const liveRow = body.items.find((s: { id: string }) => s.id === live.siteId);
  assert.equal(liveRow.status, 'ok');
  assert.equal(liveRow.version, '1.2.3');
  assert.equal(liveRow.unsentRows, 3);
  assert.ok(liveRow.syncLagSec >= 900 && liveRow.syncLagSec < 1900, `lag ${liveRow.syncLagSec}`);
  assert.ok(Math.abs(liveRow.lastBackupAgeSec - 7200) < 60);
  assert.ok(Date.now() - Date.parse(liveRow.lastContactAt) < 60_000);
  const silentRow = body.items.find((s: { id: string }) => s.id === silent.siteId);
  // It is "connected" (it sent a batch just now), but its newest data is two days old: stale.
  assert.equal(silentRow.status, 'stale');
  assert.ok(silentRow.syncLagSec > 86_400);
  assert.equal(typeof silentRow.completeness, 'number');
});

test('one alert list across sites, newest first, paged; resolved ones only when asked', async () => {
  const admin = await adminToken(fleet.db);
  const a = await enrolSite(fleet, 'Alerts A');
  const b = await enrolSite(fleet, 'Alerts B');
  const alert = (id: number, status: string, minutesAgo: number, seq: number) => ({
    id,
    title: `alert ${id}`,
    level: 'warning',
    status,
    occurredAt: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
    acknowledgedAt: null,
    resolvedAt: status === 'resolved' ? new Date().toISOString() : null,
    seq,
  });
  assert.equal(
    (
      await sendBatch(fleet.url, a.credential, {
        sentAt: new Date().toISOString(),
        after: 0,
        through: 2,
        alerts: [alert(1, 'active', 30, 1), alert(2, 'resolved', 20, 2)],
      })
    ).status,
    200,
  );
  assert.equal(
    (await sendBatch(fleet.url, b.credential, { sentAt: new Date().toISOString(), after: 0, through: 1, alerts: [alert(1, 'acknowledged', 10, 1)] })).status,
    200,
  );
  const open = await getJson(`${fleet.url}/api/fleet/alerts?pageSize=200`, admin);
  const mine = open.body.items.filter((x: { siteId: string }) => x.siteId === a.siteId || x.siteId === b.siteId);
  assert.deepEqual(
    mine.map((x: { siteName: string; id: string; status: string }) => [x.siteName, x.id, x.status]),
    [
      ['Alerts B', '1', 'acknowledged'],
      ['Alerts A', '1', 'active'],
    ],
  );
  // The lifecycle moves on at the site: the alert is resolved there and leaves the open list.
  assert.equal(
    (await sendBatch(fleet.url, b.credential, { sentAt: new Date().toISOString(), after: 1, through: 2, alerts: [alert(1, 'resolved', 10, 2)] })).status,
    200,
  );
  const after = await getJson(`${fleet.url}/api/fleet/alerts?pageSize=200`, admin);
  assert.ok(!after.body.items.some((x: { siteId: string }) => x.siteId === b.siteId));
  const all = await getJson(`${fleet.url}/api/fleet/alerts?status=all&pageSize=200`, admin);
  assert.equal(all.body.items.filter((x: { siteId: string }) => x.siteId === a.siteId || x.siteId === b.siteId).length, 3);
  assert.equal((await getJson(`${fleet.url}/api/fleet/alerts?pageSize=501`, admin)).status, 400, 'at most 500 a page');
});

test('roles: a viewer reads but cannot revoke; a user limited to one site sees only it; no token is 401', async () => {
  const one = await enrolSite(fleet, 'Visible');
  const other = await enrolSite(fleet, 'Hidden');
  assert.equal((await sendBatch(fleet.url, one.credential, intervalBatch({ after: 0, from: quarterAgo(2), count: 2 }))).status, 200);
  assert.equal((await sendBatch(fleet.url, other.credential, intervalBatch({ after: 0, from: quarterAgo(2), count: 2 }))).status, 200);
  const limited = await addUser(fleet.db.pool, `limited-${Date.now()}`, 'viewer', [one.siteId]);
  const sites = await getJson(`${fleet.url}/api/fleet/sites`, limited.token);
  assert.deepEqual(
    sites.body.items.map((s: { id: string }) => s.id),
    [one.siteId],
  );
  const eui = await getJson(`${fleet.url}/api/fleet/eui`, limited.token);
  assert.deepEqual(
    eui.body.items.map((s: { id: string }) => s.id),
    [one.siteId],
  );
  const meters = await getJson(`${fleet.url}/api/fleet/sites/${one.siteId}/meters`, limited.token);
  assert.equal(meters.status, 200);
  assert.deepEqual(
    meters.body.items.map((m: { key: string; commodity: string; siteTotal: boolean }) => [m.key, m.commodity, m.siteTotal]),
    [
      ['1', 'electricity', true],
      ['2', 'gas', true],
      ['3', 'electricity', false],
    ],
  );
  assert.equal((await getJson(`${fleet.url}/api/fleet/sites/${other.siteId}/meters`, limited.token)).status, 404);
  assert.equal((await getJson(`${fleet.url}/api/fleet/sites/not-a-uuid/meters`, limited.token)).status, 404);
  const revoke = await fetch(`${fleet.url}/api/fleet/sites/${one.siteId}/revoke`, { method: 'POST', headers: { authorization: `Bearer ${limited.token}` } });
  assert.equal(revoke.status, 403);
  assert.equal((await fetch(`${fleet.url}/api/fleet/sites`)).status, 401);
  assert.equal((await fetch(`${fleet.url}/api/fleet/nothing`)).status, 404);
});

test('the health list and the EUI ranking a page at a time: ranked on the server in a stable order, counts of the whole list, bad parameters a 400 naming the field', async () => {
  // Seven sites of their own (a user limited to them: the other tests' sites stay out): four never sent (stale), three
  // sent recent intervals and a month of days with a floor area (warning: yesterday incomplete, no backup), each with
  // its own EUI. Names interleave the grades, so the order is the server's ranking, not the names'.
  const names = ['Page A', 'Page B', 'Page C', 'Page D', 'Page E', 'Page F', 'Page G'];
  const enrolled = [];
  for (const name of names) enrolled.push({ name, ...(await enrolSite(fleet, name)) });
  const sending = [enrolled[1]!, enrolled[3]!, enrolled[5]!];
  for (const [i, site] of sending.entries()) {
    const days = dayBatch(0, monthsAgo(2), 20, { electricity: 10 * (i + 1), gas: 0 }, 1000);
    assert.equal((await sendBatch(fleet.url, site.credential, days)).status, 200);
    const live = intervalBatch({ after: days.through, from: quarterAgo(2), count: 2, meters: ['1'], withMetadata: false });
    assert.equal((await sendBatch(fleet.url, site.credential, live)).status, 200);
    // Page D has two open alerts and a resolved one (counted on the page that shows it).
    if (i === 1) {
      const alert = (id: number, status: string) => ({
        id,
        title: `Alert ${id}`,
        level: 'warning',
        status,
        occurredAt: new Date().toISOString(),
        acknowledgedAt: null,
        resolvedAt: status === 'resolved' ? new Date().toISOString() : null,
        seq: live.through + id,
      });
      const alerts = {
        sentAt: new Date().toISOString(),
        after: live.through,
        through: live.through + 3,
        alerts: [alert(1, 'active'), alert(2, 'active'), alert(3, 'resolved')],
      };
      assert.equal((await sendBatch(fleet.url, site.credential, alerts)).status, 200);
    }
  }
  const { token } = await addUser(
    fleet.db.pool,
    'pager',
    'viewer',
    enrolled.map((s) => s.siteId),
  );
  const get = async (path: string) => {
    const response = await getJson(`${fleet.url}${path}`, token);
    assert.equal(response.status, 200, `${path}: ${JSON.stringify(response.body)}`);
    return response.body;
  };

  const ids = (rows: Array<{ id: string; grade: string }>) => rows.map((row) => `${row.id} ${row.grade}`);
  const whole = await get('/api/fleet/sites?pageSize=500');
  const stale = ['Page A', 'Page C', 'Page E', 'Page G'];
  const warning = ['Page B', 'Page D', 'Page F'];
  assert.deepEqual(
    whole.items.map((s: { name: string }) => s.name),
    [...stale, ...warning],
    'stale first, then warnings; by name within a grade',
  );
  assert.deepEqual(whole.counts, { stale: 4, warning: 3, healthy: 0 });
  const pages = [];
  for (let page = 1; page <= 3; page++) {
    const body = await get(`/api/fleet/sites?page=${page}&pageSize=3`);
    assert.deepEqual([body.total, body.page, body.pageSize, body.counts], [7, page, 3, whole.counts], 'the whole list’s size and counts on every page');
    // (Sites, not whole rows: lags and ages are counted in seconds from now.)
    assert.deepEqual(ids((await get(`/api/fleet/sites?page=${page}&pageSize=3`)).items), ids(body.items), 'the same page again: the same sites');
    pages.push(...body.items);
  }
  assert.deepEqual(ids(pages), ids(whole.items), 'the pages together are the list, each site once');
  assert.deepEqual((await get('/api/fleet/sites?page=4&pageSize=3')).items, [], 'past the end: no rows');
  const one = await get(`/api/fleet/sites?site=${enrolled[3]!.siteId}`);
  assert.deepEqual([one.total, one.items[0].name, one.items[0].openAlerts], [1, 'Page D', 2], 'one site’s row, its open alerts counted');
  assert.deepEqual(
    whole.items.map((s: { openAlerts: number }) => s.openAlerts),
    [0, 0, 0, 0, 0, 2, 0],
  );
  const elsewhere = await enrolSite(fleet, 'Not the pager’s');
  assert.equal((await get(`/api/fleet/sites?site=${elsewhere.siteId}`)).total, 0, 'a site outside the user’s list is no row');

  // The ranking: ranked over all seven, then paged; the bars' scale is the whole list's highest.
  const ranking = await get('/api/fleet/eui?pageSize=500');
  assert.deepEqual(
    ranking.items.map((r: { name: string; rank: number | null }) => [r.name, r.rank]),
    [
      ['Page F', 1],
      ['Page D', 2],
      ['Page B', 3],
      ['Page A', null],
      ['Page C', null],
      ['Page E', null],
      ['Page G', null],
    ],
  );
  const rankPages = [];
  for (let page = 1; page <= 4; page++) {
    const body = await get(`/api/fleet/eui?page=${page}&pageSize=2`);
    assert.equal(body.total, 7);
    assert.equal(body.maxEui, ranking.items[0].eui);
    rankPages.push(...body.items);
  }
  assert.deepEqual(rankPages, ranking.items);

  // Bad parameters: 400, the field named.
  const refused: Array<[string, string]> = [
    ['/api/fleet/sites?pageSize=0', 'pageSize'],
    ['/api/fleet/sites?pageSize=501', 'pageSize'],
    ['/api/fleet/sites?page=abc', 'page'],
    ['/api/fleet/sites?page=1&page=2', 'page'],
    ['/api/fleet/sites?site=nope', 'site'],
    ['/api/fleet/sites?sort=name', 'sort'],
    ['/api/fleet/eui?site=' + enrolled[0]!.siteId, 'site'],
    ['/api/fleet/eui?page=-1', 'page'],
    ['/api/fleet/alerts?status=bogus', 'status'],
    ['/api/fleet/alerts?pageSize=1e2', 'pageSize'],
  ];
  for (const [path, field] of refused) {
    const response = await getJson(`${fleet.url}${path}`, token);
    assert.equal(response.status, 400, path);
    assert.equal(response.body.code, 'invalid_request', path);
    assert.equal(response.body.details.field, field, path);
    assert.match(response.body.error, new RegExp(`^${field} `), path);
  }
});

test('the health list ranked in SQL agrees with gradeOf on every row; EUI sums of another month fall back to the monthly totals', async () => {
  const admin = await adminToken(fleet.db);
  // Sites in each state the grade knows: fresh with a backup, fresh without one (warning), silent (stale), refusing.
  const fresh = await enrolSite(fleet, 'Grade fresh');
  const noBackup = await enrolSite(fleet, 'Grade no backup');
  const silent = await enrolSite(fleet, 'Grade silent');
  const batch = (backup: boolean) => {
    const b = intervalBatch({ after: 0, from: quarterAgo(4), count: 4 });
    b.health = { version: '1', collector: 'ok', gateway: 'ok', lastBackupAt: backup ? new Date(Date.now() - 3600_000).toISOString() : null, unsentRows: 0 };
    return b;
  };
  assert.equal((await sendBatch(fleet.url, fresh.credential, batch(true))).status, 200);
  assert.equal((await sendBatch(fleet.url, noBackup.credential, batch(false))).status, 200);
  assert.equal((await sendBatch(fleet.url, silent.credential, intervalBatch({ after: 0, from: quarterAgo(4 * 24 * 3), count: 2 }))).status, 200);
  const order = { stale: 0, warning: 1, healthy: 2 } as const;
  const seen: Array<{ id: string; grade: keyof typeof order; name: string }> = [];
  for (let page = 1; ; page++) {
    const { status, body } = await getJson(`${fleet.url}/api/fleet/sites?page=${page}&pageSize=3`, admin);
    assert.equal(status, 200);
    for (const row of body.items) {
      const { grade } = gradeOf(row);
      assert.equal(row.grade, grade, `${row.name}: the page's grade is gradeOf's`);
      seen.push(row);
    }
    if (page * 3 >= body.total) {
      assert.equal(seen.length, body.total);
      assert.equal(body.counts.stale + body.counts.warning + body.counts.healthy, body.total);
      break;
    }
  }
  // Ranked by grade (stale, warning, healthy) across pages, the SQL's order.
  for (let i = 1; i < seen.length; i++) assert.ok(order[seen[i - 1]!.grade] <= order[seen[i]!.grade], `${seen[i - 1]!.name} before ${seen[i]!.name}`);
  const gradeOfSite = (id: string) => seen.find((r) => r.id === id)!.grade;
  // (no rows of yesterday: incomplete, a warning, as is no backup)
  assert.equal(gradeOfSite(fresh.siteId), 'warning');
  assert.equal(gradeOfSite(noBackup.siteId), 'warning');
  assert.equal(gradeOfSite(silent.siteId), 'stale');

  // EUI: a site with 13 months of days has its sums kept for this month; made to look a month old (the month turned),
  // its next batch brings the sums up to date from its monthly totals.
  const site = await enrolSite(fleet, 'EUI kept');
  const days = dayBatch(0, monthsAgo(13), 400, { electricity: 10, gas: 0 }, 1000);
  assert.equal((await sendBatch(fleet.url, site.credential, days)).status, 200);
  const kept = await fleet.db.pool.query('select eui_month::text as m from sites where id = $1', [site.siteId]);
  assert.equal(kept.rows[0].m, monthsAgo(0));
  const euiOf = async () => (await getJson(`${fleet.url}/api/fleet/eui?pageSize=500`, admin)).body.items.find((r: { id: string }) => r.id === site.siteId).eui;
  const yearDays = Math.round((Date.parse(monthsAgo(0)) - Date.parse(monthsAgo(12))) / 86_400_000);
  const expected = (10 * yearDays) / 1000;
  assert.ok(Math.abs((await euiOf()) - expected) < 1e-9);
  await fleet.db.pool.query(`update site_eui set cur = 0 where site_id = $1`, [site.siteId]);
  await fleet.db.pool.query(`update sites set eui_month = (eui_month - interval '1 month')::date where id = $1`, [site.siteId]);
  const restate = dayBatch(days.through, monthsAgo(0), 1, { electricity: 10, gas: 0 }, 1000);
  assert.equal((await sendBatch(fleet.url, site.credential, { ...restate, days: [], through: days.through })).status, 200);
  const month = await fleet.db.pool.query(
    'select eui_month::text as m, (select cur from site_eui where site_id = $1 and commodity = $2) as cur from sites where id = $1',
    [site.siteId, 'electricity'],
  );
  assert.equal(month.rows[0].m, monthsAgo(0), 'the batch brought the sums up to this month');
  assert.ok(Math.abs(month.rows[0].cur - 10 * yearDays) < 1e-6);
  assert.ok(Math.abs((await euiOf()) - expected) < 1e-9);
});

test('the EUI ranking is read from the figures the ingest keeps: a restated day or a new floor area moves the site, and the page equals the rules', async () => {
  const first = await enrolSite(fleet, 'Kept first');
  const second = await enrolSite(fleet, 'Kept second');
  const mine = [first.siteId, second.siteId];
  // Two complete months of days: 100 and 50 kWh of electricity a day, 1,000 m² each.
  const a = dayBatch(0, monthsAgo(2), 40, { electricity: 100, gas: 0 }, 1000);
  const b = dayBatch(0, monthsAgo(2), 40, { electricity: 50, gas: 0 }, 1000);
  assert.equal((await sendBatch(fleet.url, first.credential, a)).status, 200);
  assert.equal((await sendBatch(fleet.url, second.credential, b)).status, 200);
  const order = async () => {
    const kept = await keptEuiPage(fleet.db.pool, mine, Date.now(), 0, 10);
    assert.equal(kept.stale, 0, 'every site kept for this month: the page is read from the index');
    const page = await euiPage(fleet.db.pool, mine, { page: 1, pageSize: 10 });
    const digits = (rows: unknown) => JSON.parse(JSON.stringify(rows, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));
    assert.deepEqual(digits(page.items), digits(await euiRanking(fleet.db.pool, mine)), 'the index’s page is the rules’ ranking');
    return page.items.map((row) => row.name);
  };
  assert.deepEqual(await order(), ['Kept first', 'Kept second']);
  // The second site restates one day of a complete month (a higher sequence): 5,000 kWh more, it leads.
  const restate = dayBatch(b.through, monthsAgo(1), 1, { electricity: 5_000, gas: 0 }, 1000);
  assert.equal((await sendBatch(fleet.url, second.credential, restate)).status, 200);
  assert.deepEqual(await order(), ['Kept second', 'Kept first']);
  // The first site's floor area shrinks to a tenth: its EUI ten times higher, it leads again (the EUI follows the area).
  const area = { ...intervalBatch({ after: a.through, from: quarterAgo(1), count: 0 }), site: { name: 'x', timezone: 'UTC', floorAreaM2: 100 } };
  assert.equal((await sendBatch(fleet.url, first.credential, area)).status, 200);
  assert.deepEqual(await order(), ['Kept first', 'Kept second']);
});

test('the health page ranked from the kept facts is the full ranking (gradeOf over every site) at two clock times, across every grade', async () => {
  const t1 = Date.now();
  const t2 = t1 + 40 * 60_000;
  const names = ['Grades never', 'Grades revoked', 'Grades lagging', 'Grades healthy', 'Grades clock', 'Grades refusing', 'Grades no backup', 'Grades backup'];
  const sites = [];
  for (const name of names) sites.push({ name, ...(await enrolSite(fleet, name)) });
  const [, revoked, lagging, healthy, ahead, refusing, noBackup, backup] = sites;
  const health = (lastBackupAt: number | null) => ({
    version: '1',
    collector: 'ok',
    gateway: 'ok',
    lastBackupAt: lastBackupAt === null ? null : new Date(lastBackupAt).toISOString(),
    unsentRows: 0,
  });
  // Yesterday (UTC) complete for the three declared meters, then the quarter hour starting next (within the 15 minutes
  // a box may be ahead): fresh at both clock times.
  const yesterday = Date.parse(new Date(t1 - 86_400_000).toISOString().slice(0, 10));
  const send = async (site: { credential: string }, options: { latest: number; backupAt: number | null; complete?: boolean }) => {
    const full = intervalBatch({ after: 0, from: yesterday, count: options.complete ? 96 : 0, meters: ['1', '2', '3'] });
    const live = intervalBatch({ after: full.through, from: options.latest, count: 1, withMetadata: false });
    live.health = health(options.backupAt);
    for (const batch of [full, live]) assert.equal((await sendBatch(fleet.url, site.credential, batch)).status, 200);
    return live.through;
  };
  const next = quarterAgo(-1, t1);
  await send(revoked!, { latest: next, backupAt: t1 - 3600_000, complete: true });
  await revokeSite(fleet.db.pool, revoked!.siteId);
  // Its newest interval 30-45 minutes old: fresh at t1 (a warning: yesterday not sent), over an hour old at t2.
  await send(lagging!, { latest: quarterAgo(2, t1), backupAt: t1 - 3600_000 });
  await send(healthy!, { latest: next, backupAt: t1 - 3600_000, complete: true });
  // A batch with an interval an hour ahead of the fleet (its clock right otherwise): quarantined, the site-clock alarm open.
  const aheadThrough = await send(ahead!, { latest: next, backupAt: t1 - 3600_000, complete: true });
  const future = intervalBatch({ after: aheadThrough, from: quarterAgo(-5, t1), count: 1, withMetadata: false });
  assert.equal((await sendBatch(fleet.url, ahead!.credential, future)).body.quarantined, 2);
  const through = await send(refusing!, { latest: next, backupAt: t1 - 3600_000, complete: true });
  assert.equal((await sendBatch(fleet.url, refusing!.credential, { ...intervalBatch({ after: 0, from: next, count: 1 }), through })).status, 409);
  await send(noBackup!, { latest: next, backupAt: null, complete: true });
  // Its last backup 47 h 40 min old at t1: within the 48 hours then, not at t2.
  await send(backup!, { latest: next, backupAt: t1 - 48 * 3600_000 + 20 * 60_000, complete: true });

  const mine = sites.map((s) => s.siteId);
  const gradeAt = new Map<number, Map<string, string>>();
  for (const now of [t1, t2]) {
    const full = byGrade(await siteHealth(fleet.db.pool, mine, now));
    const pages = [];
    for (let page = 1; page <= 3; page++) {
      const body = await siteHealthPage(fleet.db.pool, mine, { page, pageSize: 3 }, now);
      const counts = { stale: 0, warning: 0, healthy: 0 };
      for (const row of full) counts[row.grade]++;
      assert.deepEqual(body.counts, counts, 'the whole list’s counts');
      pages.push(...body.items);
    }
    const shown = (rows: Array<{ name: string; grade: string; reasons: string[] }>) => rows.map((row) => `${row.name} ${row.grade} ${row.reasons.join(',')}`);
    assert.deepEqual(shown(pages), shown(full), `the pages are the full ranking at ${new Date(now).toISOString()}`);
    gradeAt.set(now, new Map(full.map((row) => [row.name, row.grade])));
  }
  const at1 = gradeAt.get(t1)!;
  assert.deepEqual(
    names.map((name) => at1.get(name)),
    ['stale', 'stale', 'warning', 'healthy', 'warning', 'warning', 'warning', 'healthy'],
    'every grade at t1',
  );
  const at2 = gradeAt.get(t2)!;
  assert.equal(at2.get('Grades lagging'), 'stale', 'its newest interval over an hour old at t2');
  assert.equal(at2.get('Grades backup'), 'warning', 'its backup over 48 hours old at t2');
});

test('a site that sent nothing since the month turned gets this month’s EUI figures from the upkeep, skipped while its batch holds its lock', async () => {
  const quiet = await enrolSite(fleet, 'Upkeep EUI');
  const batch = dayBatch(0, monthsAgo(3), 60, { electricity: 100, gas: 0 }, 1000);
  assert.equal((await sendBatch(fleet.url, quiet.credential, batch)).status, 200);
  const sql = fleet.db.pool;
  const dbNow = Date.now();
  const mine = [quiet.siteId];
  const kept = await keptEuiPage(sql, mine, dbNow, 0, 10);
  assert.equal(kept.stale, 0, 'kept for this month by its batch');
  const expected = await euiRanking(sql, mine, dbNow);
  assert.ok(expected[0]!.eui! > 0);
  // The month turned since: its figures are a month old (and wrong, to be sure they are made again, not kept).
  await sql.query(`update sites set eui_month = (eui_month - interval '1 month')::date, eui_kwh = 1 where id = $1`, [quiet.siteId]);
  assert.equal((await keptEuiPage(sql, mine, dbNow, 0, 10)).stale, 1);

  // While a batch of the site is being stored (its ingest lock held), the upkeep leaves it to that batch.
  const holder = await sql.connect();
  try {
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock($1, hashtext($2))', [SITE_LOCK, quiet.siteId]);
    const skipped = await keepEuiCurrent(fleet.db.pool, dbNow);
    assert.ok(skipped.skipped >= 1, JSON.stringify(skipped));
    assert.equal((await keptEuiPage(sql, mine, dbNow, 0, 10)).stale, 1);
  } finally {
    await holder.query('rollback');
    holder.release();
  }
  const done = await keepEuiCurrent(fleet.db.pool, dbNow);
  assert.ok(done.refreshed >= 1, JSON.stringify(done));
  const page = await keptEuiPage(sql, mine, dbNow, 0, 10);
  assert.equal(page.stale, 0, 'kept for this month again: the page reads the index');
  assert.equal(page.rows[0]!.eui, expected[0]!.eui, 'the figures made again from the monthly totals');
  assert.deepEqual(await keepEuiCurrent(fleet.db.pool, dbNow), { refreshed: 0, skipped: 0 }, 'nothing left to do');
});
