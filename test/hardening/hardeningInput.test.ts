// Hardening round 3, input rules: duplicate tariff days, an empty backup-schedule change, energy years out of range,
// display names with control or bidi-override characters, meter areas under the area-name rules.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer();
  token = (await server.createUser({ role: 'admin' })).accessToken;
});
after(() => server.close());

const errorLines = () => server.logs.filter((line) => JSON.parse(line).level >= 50);

describe('tariff versions', () => {
  test('a second version of the same validFrom is 409, on create (also in parallel) and on update', async () => {
    const day = new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 10);
    const later = new Date(Date.now() + 41 * 86_400_000).toISOString().slice(0, 10);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => server.request('POST', '/api/energy/tariffs', { token, body: { validFrom: day, price: 0.3, carbonFactor: 0.2 } })),
    );
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    const conflict = answers.find((answer) => answer.status === 409)!;
    assert.equal(conflict.body.code, 'CONFLICT');
    assert.match(conflict.body.error, new RegExp(day));
    const other = await server.request('POST', '/api/energy/tariffs', { token, body: { validFrom: later, price: 0.3, carbonFactor: 0.2 } });
    assert.equal(other.status, 201);
    const moved = await server.request('PUT', `/api/energy/tariffs/${other.body.id}`, { token, body: { validFrom: day } });
    assert.equal(moved.status, 409, moved.text);
    const same = await server.request('PUT', `/api/energy/tariffs/${other.body.id}`, { token, body: { validFrom: later, note: 'kept' } });
    assert.equal(same.status, 200, 'its own day is no clash');
    assert.equal(errorLines().length, 0);
  });
});

describe('backup schedule', () => {
  test('PUT {} is 400 and changes nothing; a real change still works', async () => {
    const before = (await server.request('GET', '/api/system/backup-schedule', { token })).body;
    const empty = await server.request('PUT', '/api/system/backup-schedule', { token, body: {} });
    assert.equal(empty.status, 400, empty.text);
    assert.equal(empty.body.code, 'VALIDATION');
    const unknownOnly = await server.request('PUT', '/api/system/backup-schedule', { token, body: { lastRunAt: null } });
    assert.equal(unknownOnly.status, 400, 'only read-only fields is no change either');
    assert.deepEqual((await server.request('GET', '/api/system/backup-schedule', { token })).body.updatedAt, before.updatedAt);
    const changed = await server.request('PUT', '/api/system/backup-schedule', { token, body: { enabled: false } });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.enabled, false);
  });
});

describe('energy years', () => {
  test('months and days outside 1970-2200 are 400 at once (0899-05 took 7-30 s)', async () => {
    for (const path of [
      '/api/energy/peaks?month=0899-05',
      '/api/energy/peaks?month=0001-01',
      '/api/energy/peaks?month=1969-12',
      '/api/energy/peaks?month=9999-12',
      '/api/energy/summary?from=0899-05-01&to=0899-06-01',
      '/api/energy/series?from=0999-01-01&to=0999-02-01&resolution=day',
      '/api/energy/series?from=2199-12-01&to=2201-01-01&resolution=month',
    ]) {
      const started = Date.now();
      const answer = await server.request('GET', path, { token });
      assert.equal(answer.status, 400, `${path}: ${answer.text.slice(0, 200)}`);
      assert.match(answer.body.details[0].message, /1970 to 2200/);
      assert.ok(Date.now() - started < 5_000, `${path} took ${Date.now() - started} ms`);
    }
  });

  test('the edges answer: 1970-01 and 2200-12 peaks, a December series that ends in the next year', async () => {
    for (const month of ['1970-01', '2200-12']) {
      const answer = await server.request('GET', `/api/energy/peaks?month=${month}`, { token });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.month, month);
    }
    const series = await server.request('GET', '/api/energy/series?from=1999-01-01&to=2000-01-01&resolution=month', { token });
    assert.equal(series.status, 200, series.text);
    assert.equal(series.body.points.length, 12);
  });
});

describe('display names', () => {
  const BAD = ['Plant\u202Eevil', 'Plant\u2066x\u2069', 'Line\nbreak', 'Esc\u001b[31m', 'Bell\u0007', 'Mark\u200F', 'Sep\u2028x', 'C1\u0085'];

  test('the site name refuses control, separator and bidi characters with a clear 400', async () => {
    for (const siteName of BAD) {
      const answer = await server.request('PUT', '/api/configs', { token, body: { siteName } });
      assert.equal(answer.status, 400, JSON.stringify(siteName));
      assert.equal(answer.body.details[0].path, 'body.siteName');
      assert.match(answer.body.details[0].message, /bidirectional/);
    }
    const fine = await server.request('PUT', '/api/configs', { token, body: { siteName: 'Werk Süd – Halle 3 (北) 🔋' } });
    assert.equal(fine.status, 200, fine.text);
  });

  test('user display names, meter names and area names refuse them too', async () => {
    const user = await server.createUser();
    for (const value of BAD.slice(0, 3)) {
      const display = await server.request('PUT', `/api/users/${user.user.id}`, { token, body: { displayName: value } });
      assert.equal(display.status, 400, `displayName ${JSON.stringify(value)}`);
      const meter = await server.request('POST', '/api/meters', { token, body: { name: value, code: 'meter.x.kwh', kind: 'energy' } });
      assert.equal(meter.status, 400, `meter ${JSON.stringify(value)}`);
      const area = await server.request('PUT', '/api/energy/areas', {
        token,
        body: { areas: [{ name: value, todayKwh: 1, monthKwh: 1, yearKwh: 1, powerKw: 1 }] },
      });
      assert.equal(area.status, 400, `area ${JSON.stringify(value)}`);
    }
  });
});

describe('meter areas follow the area-name rules', () => {
  test('"total" in any case is reserved; another casing of a known area is refused with its spelling', async () => {
    for (const area of ['total', 'TOTAL', 'Total']) {
      const answer = await server.request('POST', '/api/meters', { token, body: { name: `m-${area}`, code: `meter.${area}.kwh`, kind: 'energy', area } });
      assert.equal(answer.status, 400, `${area}: ${answer.text}`);
      assert.equal(answer.body.details[0].path, 'body.area');
      assert.match(answer.body.details[0].message, /reserved/);
    }
    const first = await server.request('POST', '/api/meters', { token, body: { name: 'Hall meter', code: 'meter.hall.kwh', kind: 'energy', area: 'Hall A' } });
    assert.equal(first.status, 201, first.text);
    const other = await server.request('POST', '/api/meters', {
      token,
      body: { name: 'Hall meter 2', code: 'meter.hall2.kwh', kind: 'energy', area: 'HALL a' },
    });
    assert.equal(other.status, 400, other.text);
    assert.match(other.body.details[0].message, /"Hall A"/);
    const same = await server.request('POST', '/api/meters', {
      token,
      body: { name: 'Hall meter 3', code: 'meter.hall3.kwh', kind: 'energy', area: 'Hall A' },
    });
    assert.equal(same.status, 201, same.text);
    const renamed = await server.request('PUT', `/api/meters/${first.body.id}`, { token, body: { area: 'TOTAL' } });
    assert.equal(renamed.status, 400);
    const cards = (await server.request('GET', '/api/energy/areas', { token })).body.areas.map((area: { name: string }) => area.name.toLowerCase());
    assert.equal(cards.filter((name: string) => name === 'hall a').length, 1);
    assert.ok(!cards.includes('total'));
    // A hand-entered card's spelling holds too (energy's cards, asked through metering's port MeterAreaCards).
    const card = { name: 'Lobby', todayKwh: 1, monthKwh: 1, yearKwh: 1, powerKw: 1 };
    assert.equal((await server.request('PUT', '/api/energy/areas', { token, body: { areas: [card] } })).status, 200);
    const lobby = await server.request('POST', '/api/meters', { token, body: { name: 'Lobby meter', code: 'meter.lobby.kwh', kind: 'energy', area: 'LOBBY' } });
    assert.equal(lobby.status, 400, lobby.text);
    assert.match(lobby.body.details[0].message, /"Lobby"/);
  });
});
