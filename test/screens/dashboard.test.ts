// The public dashboard payload, recent alerts, per-user dashboard settings, overview KPIs, weekly energy and energy areas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { insertAlert, insertEnergyDaily, insertFault, insertMaintenance, insertUpload } from '../helpers/facilityRows.ts';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { DEFAULT_LAYOUT } from '../../src/screens/dashboard/service.ts';

const DAY = 86_400_000;

async function serverFor(t: { after(fn: () => unknown): void }): Promise<TestServer> {
  const server = await startTestServer();
  t.after(() => server.close());
  return server;
}

function detailPaths(body: { details?: { path: string }[] }): string[] {
  return (body.details ?? []).map((detail) => detail.path);
}

const area = (name: string, todayKwh: number, extra: Partial<{ monthKwh: number; yearKwh: number; powerKw: number }> = {}) => ({
  name,
  todayKwh,
  monthKwh: extra.monthKwh ?? todayKwh * 20,
  yearKwh: extra.yearKwh ?? todayKwh * 200,
  powerKw: extra.powerKw ?? 5,
});

test('GET /dashboard needs no token, carries the portal payload and no personal data', async (t) => {
  const server = await serverFor(t);
  const sqlite = server.service.deps.db.sqlite;
  const admin = await server.createUser({ role: 'admin', username: 'zelda_private', email: 'zelda.private@example.test' });
  await server.request('PUT', `/api/users/${admin.user.id}`, { token: admin.accessToken, body: { displayName: 'Zelda Secretname', phone: '+49 111 222' } });
  const operator = await server.createUser({ role: 'operator' });
  assert.equal(
    (await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [area('Hall A', 10), area('Office', 2.5)] } })).status,
    200,
  );
  insertAlert(sqlite, { title: 'Boiler trip', level: 'critical', status: 'resolved', byUserId: admin.user.id, message: 'Reset by Zelda Secretname' });
  insertAlert(sqlite, { title: 'Door open', level: 'info', status: 'acknowledged', byUserId: admin.user.id });
  const model = insertUpload(sqlite, server.dataDir, 'model_files', admin.user.id);
  assert.equal((await server.request('PUT', '/api/three-d-config', { token: admin.accessToken, body: { modelFileId: model.id } })).status, 200);

  const response = await server.request('GET', '/api/dashboard');
  assert.equal(response.status, 200);
  const body = response.body;
  assert.deepEqual(Object.keys(body).sort(), [
    'alertCounts',
    'areas',
    'gateway',
    'generatedAt',
    'overview',
    'platform',
    'recentAlerts',
    'scene',
    'weeklyEnergy',
  ]);
  assert.deepEqual(body.alertCounts, { info: 0, warning: 0, critical: 0 });
  assert.ok(['up', 'down', 'unknown'].includes(body.gateway.state));
  assert.equal(body.platform.siteName, 'EMS');
  assert.equal(body.overview.energyTodayKwh, 12.5);
  assert.deepEqual(
    body.areas.map((a: { name: string }) => a.name),
    ['Hall A', 'Office'],
  );
  assert.equal(body.weeklyEnergy.days.length, 7);
  assert.equal(body.weeklyEnergy.days[6].kwh, 12.5);
  assert.equal(body.scene.modelUrl, `/static/models/${model.storedName}`);
  assert.deepEqual(
    body.recentAlerts.map((a: { title: string; level: string }) => [a.title, a.level]),
    [
      ['Door open', 'info'],
      ['Boiler trip', 'critical'],
    ],
  );
  for (const alert of body.recentAlerts) assert.deepEqual(Object.keys(alert).sort(), ['area', 'id', 'level', 'occurredAt', 'status', 'title']);

  for (const personal of ['zelda', 'Secretname', 'example.test', '+49 111', 'acknowledgedBy', 'resolvedBy', 'userId', 'uploadedBy', admin.accessToken]) {
    assert.ok(!response.text.toLowerCase().includes(personal.toLowerCase()), `the public payload must not contain "${personal}"`);
  }

  // The public route is exactly GET /api/dashboard: its neighbours still need a token.
  assert.equal((await server.request('GET', '/api/dashboard/alerts')).status, 401);
  assert.equal((await server.request('GET', '/api/dashboard/settings')).status, 401);
  assert.equal((await server.request('PUT', '/api/dashboard/settings', { body: { theme: 'dark' } })).status, 401);
});

test('GET /dashboard reflects writes at once, including writes from another connection', async (t) => {
  const server = await serverFor(t);
  const operator = await server.createUser({ role: 'operator' });
  const first = await server.request('GET', '/api/dashboard');
  assert.deepEqual(first.body.areas, []);
  assert.equal(first.body.overview.activeAlerts, 0);

  await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [area('Roof PV plant room', 3)] } });
  const afterPut = await server.request('GET', '/api/dashboard');
  assert.deepEqual(
    afterPut.body.areas.map((a: { name: string }) => a.name),
    ['Roof PV plant room'],
  );

  // Like emsctl or a backup restore: a second connection to the same file.
  const other = new Database(server.service.deps.db.path);
  t.after(() => other.close());
  insertAlert(other, { title: 'Written elsewhere', status: 'active' });
  const afterOther = await server.request('GET', '/api/dashboard');
  assert.equal(afterOther.body.overview.activeAlerts, 1);
  assert.equal(afterOther.body.recentAlerts[0].title, 'Written elsewhere');
});

test('GET /dashboard/alerts: recent alerts newest first, page/pageSize (limit deprecated) and filters, viewer allowed', async (t) => {
  const server = await serverFor(t);
  const viewer = await server.createUser();
  const sqlite = server.service.deps.db.sqlite;
  const base = Date.now() - 10 * 60_000;
  const ids = [
    insertAlert(sqlite, { title: 'a', level: 'info', occurredAt: new Date(base).toISOString() }),
    insertAlert(sqlite, { title: 'b', level: 'critical', occurredAt: new Date(base + 60_000).toISOString() }),
    insertAlert(sqlite, { title: 'c', level: 'warning', status: 'resolved', occurredAt: new Date(base + 120_000).toISOString() }),
  ];
  const all = await server.request('GET', '/api/dashboard/alerts', { token: viewer.accessToken });
  assert.equal(all.status, 200);
  assert.deepEqual(
    all.body.items.map((a: { id: number }) => a.id),
    [ids[2], ids[1], ids[0]],
  );
  const limited = await server.request('GET', '/api/dashboard/alerts?limit=1', { token: viewer.accessToken });
  assert.deepEqual(
    limited.body.items.map((a: { id: number }) => a.id),
    [ids[2]],
  );
  // page/pageSize like every other list, with the total; `limit` (deprecated) is the page size.
  const second = await server.request('GET', '/api/dashboard/alerts?page=2&pageSize=2', { token: viewer.accessToken });
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(second.body, { items: [all.body.items[2]], total: 3, page: 2, pageSize: 2 });
  assert.deepEqual({ ...all.body, items: all.body.items.length }, { items: 3, total: 3, page: 1, pageSize: 20 });
  const limitedPage = await server.request('GET', '/api/dashboard/alerts?limit=1&page=3', { token: viewer.accessToken });
  assert.deepEqual([limitedPage.body.items.map((a: { id: number }) => a.id), limitedPage.body.pageSize], [[ids[0]], 1]);
  const active = await server.request('GET', '/api/dashboard/alerts?status=active&level=critical&level=info', { token: viewer.accessToken });
  assert.deepEqual(
    active.body.items.map((a: { id: number }) => a.id),
    [ids[1], ids[0]],
  );
  const bad = await server.request('GET', '/api/dashboard/alerts?limit=0&status=gone', { token: viewer.accessToken });
  assert.equal(bad.status, 400);
  assert.ok(detailPaths(bad.body).length >= 1);
  assert.match(detailPaths(bad.body)[0], /^query\.(limit|status)/);
});

test('dashboard settings: defaults until saved, partial updates, per user, validated', async (t) => {
  const server = await serverFor(t);
  const alice = await server.createUser();
  const bob = await server.createUser();

  const defaults = await server.request('GET', '/api/dashboard/settings', { token: alice.accessToken });
  assert.equal(defaults.status, 200);
  assert.deepEqual(defaults.body, { layout: DEFAULT_LAYOUT, refreshIntervalSec: 30, theme: 'light', updatedAt: null });

  const layout = [
    { id: 'energy', type: 'weeklyEnergy', x: 0, y: 0, w: 6, h: 4, options: { unit: 'kWh', stacked: true } },
    { id: 'alerts', type: 'alerts', x: 6, y: 0, w: 6, h: 4 },
  ];
  const saved = await server.request('PUT', '/api/dashboard/settings', { token: alice.accessToken, body: { layout, theme: 'dark' } });
  assert.equal(saved.status, 200);
  assert.deepEqual(saved.body.layout, layout);
  assert.equal(saved.body.theme, 'dark');
  assert.equal(saved.body.refreshIntervalSec, 30, 'untouched fields keep their value');
  assert.equal(typeof saved.body.updatedAt, 'string');

  const refresh = await server.request('PUT', '/api/dashboard/settings', { token: alice.accessToken, body: { refreshIntervalSec: 10 } });
  assert.deepEqual([refresh.body.refreshIntervalSec, refresh.body.theme, refresh.body.layout], [10, 'dark', layout]);
  assert.deepEqual((await server.request('GET', '/api/dashboard/settings', { token: alice.accessToken })).body, refresh.body);

  const bobs = await server.request('GET', '/api/dashboard/settings', { token: bob.accessToken });
  assert.equal(bobs.body.updatedAt, null, "another user's settings are untouched");

  const duplicate = await server.request('PUT', '/api/dashboard/settings', { token: bob.accessToken, body: { layout: [layout[1], layout[1]] } });
  assert.equal(duplicate.status, 400);
  assert.deepEqual(detailPaths(duplicate.body), ['body.layout.1.id']);
  const tooFast = await server.request('PUT', '/api/dashboard/settings', { token: bob.accessToken, body: { refreshIntervalSec: 1 } });
  assert.equal(tooFast.status, 400);
  assert.deepEqual(detailPaths(tooFast.body), ['body.refreshIntervalSec']);
  const badTheme = await server.request('PUT', '/api/dashboard/settings', { token: bob.accessToken, body: { theme: 'neon' } });
  assert.equal(badTheme.status, 400);
  assert.deepEqual(detailPaths(badTheme.body), ['body.theme']);
  const empty = await server.request('PUT', '/api/dashboard/settings', { token: bob.accessToken, body: {} });
  assert.equal(empty.status, 400);
  const huge = await server.request('PUT', '/api/dashboard/settings', {
    token: bob.accessToken,
    body: { layout: [{ id: 'x', type: 'note', x: 0, y: 0, w: 1, h: 1, options: { text: 'a'.repeat(70_000) } }] },
  });
  assert.equal(huge.status, 400);
  assert.deepEqual(detailPaths(huge.body), ['body.layout']);
});

test('GET /overview/stats computes the KPI cards from the tables', async (t) => {
  const server = await serverFor(t);
  const operator = await server.createUser({ role: 'operator' });
  const viewer = await server.createUser();
  const sqlite = server.service.deps.db.sqlite;

  const empty = await server.request('GET', '/api/overview/stats', { token: viewer.accessToken });
  assert.equal(empty.status, 200);
  assert.equal(empty.body.energyTodayKwh, 0);
  assert.equal(empty.body.activeAlerts, 0);

  await server.request('PUT', '/api/energy/areas', {
    token: operator.accessToken,
    body: { areas: [area('A', 100.1, { monthKwh: 2000, powerKw: 10 }), area('B', 50.2, { monthKwh: 1000.5, powerKw: 2.5 })] },
  });
  insertAlert(sqlite, { status: 'active', level: 'critical' });
  insertAlert(sqlite, { status: 'active', level: 'warning' });
  insertAlert(sqlite, { status: 'acknowledged' });
  insertAlert(sqlite, { status: 'resolved', level: 'critical' });
  insertFault(sqlite, 'open');
  insertFault(sqlite, 'in_progress');
  insertFault(sqlite, 'resolved');
  insertFault(sqlite, 'closed');
  insertMaintenance(sqlite, 'planned', -DAY); // overdue
  insertMaintenance(sqlite, 'in_progress', 3 * DAY); // due this week
  insertMaintenance(sqlite, 'planned', 30 * DAY); // later
  insertMaintenance(sqlite, 'done', -2 * DAY);
  insertMaintenance(sqlite, 'planned', null); // unscheduled

  const stats = await server.request('GET', '/api/overview/stats', { token: viewer.accessToken });
  assert.equal(stats.status, 200);
  const { generatedAt, ...figures } = stats.body;
  assert.equal(typeof generatedAt, 'string');
  assert.deepEqual(figures, {
    energyTodayKwh: 150.3,
    energyMonthKwh: 3000.5,
    powerKw: 12.5,
    costToday: 37.58, // 150.3 kWh × 0.25 (seeded price)
    currency: 'EUR',
    carbonTodayKg: 60.12, // × 0.4 kg/kWh
    costMonth: 750.13, // 3000.5 kWh × 0.25
    carbonMonthKg: 1200.2,
    activeAlerts: 2,
    criticalAlerts: 1,
    openFaults: 2,
    maintenanceDue: 2,
    maintenanceOverdue: 1,
  });
  assert.equal((await server.request('GET', '/api/overview/stats')).status, 401);
});

test('GET /overview/energy/weekly: 7 site days, oldest first, null (missing) where nothing was recorded', async (t) => {
  const server = await serverFor(t);
  const viewer = await server.createUser();
  const operator = await server.createUser({ role: 'operator' });
  const today = siteDay('UTC');
  insertEnergyDaily(server.service.deps.db.sqlite, addDays(today, -3), 42.5);
  insertEnergyDaily(server.service.deps.db.sqlite, addDays(today, -7), 999); // one day too old
  insertEnergyDaily(server.service.deps.db.sqlite, addDays(today, -2), 77, 'Hall A'); // an area row, not the total
  await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [area('Hall A', 7), area('Hall B', 3.25)] } });

  const weekly = await server.request('GET', '/api/overview/energy/weekly', { token: viewer.accessToken });
  assert.equal(weekly.status, 200);
  assert.deepEqual(weekly.body, {
    days: [-6, -5, -4, -3, -2, -1, 0].map((offset) => {
      const kwh = offset === -3 ? 42.5 : offset === 0 ? 10.25 : null;
      return { day: addDays(today, offset), kwh, measured: kwh === null ? 0 : 1, estimated: 0, missing: kwh === null ? 1 : 0 };
    }),
    totalKwh: 52.75,
    completeness: { measured: 0.2857, estimated: 0, missing: 0.7143 },
    timezone: 'UTC',
  });
  assert.equal((await server.request('GET', '/api/overview/energy/weekly')).status, 401);
});

test('the site day follows the configured time zone', async (t) => {
  const server = await serverFor(t);
  const admin = await server.createUser({ role: 'admin' });
  // UTC+14 and UTC-11: at any instant these two zones are on different calendar days.
  for (const timezone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
    assert.equal((await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone } })).status, 200);
    await server.request('PUT', '/api/energy/areas', { token: admin.accessToken, body: { areas: [area('Hall A', 4)] } });
    const weekly = await server.request('GET', '/api/overview/energy/weekly', { token: admin.accessToken });
    assert.equal(weekly.body.timezone, timezone);
    assert.deepEqual(weekly.body.days[6], { day: siteDay(timezone), kwh: 4, measured: 1, estimated: 0, missing: 0 });
  }
  const days = server.service.deps.db.sqlite.prepare("SELECT day FROM energy_daily WHERE area = 'total' ORDER BY day").pluck().all();
  assert.equal(days.length, 2, 'one total row per site day');
});

test('energy areas: operators replace the set in one transaction; viewers read', async (t) => {
  const server = await serverFor(t);
  const viewer = await server.createUser();
  const operator = await server.createUser({ role: 'operator' });
  const sqlite = server.service.deps.db.sqlite;

  assert.deepEqual((await server.request('GET', '/api/energy/areas', { token: viewer.accessToken })).body, { areas: [], unallocated: null });
  assert.equal((await server.request('PUT', '/api/energy/areas', { token: viewer.accessToken, body: { areas: [area('A', 1)] } })).status, 403);
  assert.equal((await server.request('GET', '/api/energy/areas')).status, 401);

  const first = await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [area('Workshop', 5), area('Canteen', 2)] } });
  assert.equal(first.status, 200);
  assert.deepEqual(
    first.body.areas.map((a: { name: string }) => a.name),
    ['Canteen', 'Workshop'],
  );
  const workshopId = first.body.areas[1].id;

  const second = await server.request('PUT', '/api/energy/areas', {
    token: operator.accessToken,
    body: { areas: [area('Workshop', 6.5), area('Server room', 1)] },
  });
  assert.equal(second.status, 200);
  assert.deepEqual(
    second.body.areas.map((a: { name: string; todayKwh: number }) => [a.name, a.todayKwh]),
    [
      ['Server room', 1],
      ['Workshop', 6.5],
    ],
  );
  assert.equal(second.body.areas[1].id, workshopId, 'an area keeps its id across replaces');
  assert.deepEqual((await server.request('GET', '/api/energy/areas', { token: viewer.accessToken })).body, { ...second.body, unallocated: null });

  const today = siteDay('UTC');
  const daily = sqlite.prepare('SELECT area, kwh FROM energy_daily WHERE day = ? ORDER BY area').all(today);
  assert.deepEqual(daily, [
    { area: 'Server room', kwh: 1 },
    { area: 'Workshop', kwh: 6.5 },
    { area: 'total', kwh: 7.5 },
  ]);

  // Invalid sets change nothing.
  const invalid = await server.request('PUT', '/api/energy/areas', {
    token: operator.accessToken,
    body: { areas: [area('Hall', 1), area('hall', 1), area('Total', 1), { ...area('Yard', 10), monthKwh: 5 }] },
  });
  assert.equal(invalid.status, 400);
  assert.deepEqual(detailPaths(invalid.body), ['body.areas.1.name', 'body.areas.2.name', 'body.areas.3.todayKwh']);
  const negative = await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [{ ...area('Hall', 1), powerKw: -1 }] } });
  assert.equal(negative.status, 400);
  assert.deepEqual(detailPaths(negative.body), ['body.areas.0.powerKw']);
  const missing = await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [{ name: 'Hall', todayKwh: 1 }] } });
  assert.equal(missing.status, 400);
  assert.match(detailPaths(missing.body)[0], /^body\.areas\.0\./);
  assert.deepEqual((await server.request('GET', '/api/energy/areas', { token: viewer.accessToken })).body, { ...second.body, unallocated: null });

  const cleared = await server.request('PUT', '/api/energy/areas', { token: operator.accessToken, body: { areas: [] } });
  assert.deepEqual(cleared.body, { areas: [] });
  assert.deepEqual(sqlite.prepare('SELECT area, kwh FROM energy_daily WHERE day = ?').all(today), [{ area: 'total', kwh: 0 }]);
});
