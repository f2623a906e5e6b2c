// Issue 24's trap: a write through another connection (emsctl, an operator's SQL fix, a second process) to what the
// service keeps in memory — the tariff versions, the fault stats snapshot, the user a token belongs to — is seen by the
// next API read, without a restart (src/platform/db/kept.ts: PRAGMA data_version).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

describe('caches see writes of another connection at the next read', () => {
  let server: TestServer;
  let admin: TestUser;
  let other: Database.Database;

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    other = new Database(path.join(server.dataDir, 'ems.db'));
    other.pragma('busy_timeout = 5000');
  });
  after(async () => {
    other.close();
    await server.close();
  });

  const get = async (url: string) => {
    const response = await server.request('GET', url, { token: admin.accessToken });
    assert.equal(response.status, 200, response.text);
    return response.body;
  };

  test('tariffs: a price fixed by SQL on the version in effect prices the next answer; a version added by SQL is listed', async () => {
    const month = (await get('/api/analysis/demand-charges')).month as string;
    const before = await get(`/api/analysis/demand-charges?month=${month}`);
    assert.equal(before.version.demandChargePerKw, 0);
    const listed = await get('/api/energy/tariffs');
    // Read twice: the second answer comes from memory.
    assert.deepEqual(await get('/api/energy/tariffs'), listed);

    other.prepare("UPDATE tariff_versions SET demand_charge_per_kw = 6.25 WHERE commodity = 'electricity'").run();
    assert.equal((await get(`/api/analysis/demand-charges?month=${month}`)).version.demandChargePerKw, 6.25);
    const now = new Date().toISOString();
    other
      .prepare(
        "INSERT INTO tariff_versions (valid_from, price, carbon_factor, bands, holidays, created_at, updated_at) VALUES ('2099-01-01', 0.5, 0.2, '[]', '[]', ?, ?)",
      )
      .run(now, now);
    const after = await get('/api/energy/tariffs');
    assert.equal(after.total, listed.total + 1);
    assert.ok(after.items.some((version: { validFrom: string; price: number }) => version.validFrom === '2099-01-01' && version.price === 0.5));
    assert.ok(
      after.items.every(
        (version: { commodity: string; validFrom: string; demandChargePerKw: number }) =>
          version.commodity !== 'electricity' || version.validFrom === '2099-01-01' || version.demandChargePerKw === 6.25,
      ),
    );
  });

  test('faults: a fault added, closed and deleted by SQL moves the stats and the overview at the next read; API writes build on that', async () => {
    const created = await server.request('POST', '/api/faults', { token: admin.accessToken, body: { device: 'Chiller 1', severity: 'low' } });
    assert.equal(created.status, 201, created.text);
    const first = await get('/api/faults/stats');
    const openBefore = (await get('/api/overview/stats')).openFaults;
    assert.equal(openBefore, first.open + first.inProgress);

    const now = new Date().toISOString();
    const added = other
      .prepare("INSERT INTO faults (device, severity, status, reported_at, created_at, updated_at) VALUES ('Pump 9', 'critical', 'open', ?, ?, ?)")
      .run(now, now, now);
    const afterInsert = await get('/api/faults/stats');
    assert.equal(afterInsert.total, first.total + 1);
    assert.equal(afterInsert.open, first.open + 1);
    assert.equal(afterInsert.bySeverity.critical, first.bySeverity.critical + 1);
    assert.equal((await get('/api/overview/stats')).openFaults, openBefore + 1);
    assert.equal((await get('/api/faults?status=open')).total, first.open + 1);

    other.prepare("UPDATE faults SET status = 'closed', resolved_at = ? WHERE id = ?").run(now, added.lastInsertRowid);
    const afterClose = await get('/api/faults/stats');
    assert.equal(afterClose.open, first.open);
    assert.equal(afterClose.closed, first.closed + 1);

    // An API write right after another connection's write: its delta builds on a recounted row, not the stale one.
    other.prepare('DELETE FROM faults WHERE id = ?').run(added.lastInsertRowid);
    const next = await server.request('POST', '/api/faults', { token: admin.accessToken, body: { device: 'Boiler 2', severity: 'high' } });
    assert.equal(next.status, 201, next.text);
    const final = await get('/api/faults/stats');
    assert.equal(final.total, first.total + 1);
    assert.equal(final.closed, first.closed);
    assert.equal(final.bySeverity.high, first.bySeverity.high + 1);
    assert.equal(final.bySeverity.critical, first.bySeverity.critical);
  });

  test('users: a role lowered and a user removed by SQL take effect at the next request with the same token', async () => {
    const operator = await server.createUser({ role: 'operator' });
    const write = () => server.request('POST', '/api/faults', { token: operator.accessToken, body: { device: 'Fan 3', severity: 'low' } });
    assert.equal((await write()).status, 201);
    other.prepare("UPDATE users SET role = 'viewer' WHERE id = ?").run(operator.user.id);
    assert.equal((await write()).status, 403);
    assert.equal((await server.request('GET', '/api/auth/me', { token: operator.accessToken })).body.role, 'viewer');
    other.prepare('DELETE FROM users WHERE id = ?').run(operator.user.id);
    assert.equal((await server.request('GET', '/api/auth/me', { token: operator.accessToken })).status, 401);
  });
});
