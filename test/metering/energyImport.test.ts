// History import over real HTTP: a dry run reports per meter what a CSV would change and writes nothing; an overlap is
// refused unless replace; bad and refused rows are 400s naming their lines and write nothing; the counter form follows
// the live readings' rules; two imports at once never count twice; imported intervals are measured (flag 32), audited,
// and the virtual meters built on them follow.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { FLAG_ESTIMATED, FLAG_IMPORTED, FLAG_JITTER, FLAG_RESET, storedFlags, storedKwh } from '../../src/metering/store.ts';
import { eventually, type TestServer, type TestUser } from '../helpers/server.ts';
import { importSite, intervalsCsv as zonedCsv } from '../helpers/importSite.ts';
import { noonZone } from '../helpers/siteClock.ts';

const Q = 15 * 60_000;
// The site's zone is one where it is about noon when the file starts, so "today" has past intervals whatever the
// hour of the run.
const ZONE = noonZone();
const today = siteDay(ZONE);
const day = (offset: number) => addDays(today, offset);
const iso = (ms: number) => new Date(ms).toISOString();

const intervalsCsv = (rows: Parameters<typeof zonedCsv>[1], header?: string) => zonedCsv(ZONE, rows, header);

describe('history import', () => {
  let server: TestServer;
  let admin: TestUser;
  let main: { id: number };
  let hvac: { id: number };
  let rest: { id: number };

  const post = (csv: string, query = '', token = admin.accessToken, type = 'text/csv') =>
    server.request('POST', `/api/energy/import${query}`, { token, raw: csv, headers: { 'content-type': type } });
  const get = async (path: string) => {
    const response = await server.request('GET', path, { token: admin.accessToken });
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    return response.body;
  };
  const dayKwh = async (meterId: number, d: string) => {
    const body = await get(`/api/energy/series?meterId=${meterId}&from=${d}&to=${addDays(d, 1)}&resolution=day`);
    return body.points[0].kwh as number | null;
  };
  const rows = (meterId: number, d: string) => {
    const row = server.service.deps.db.sqlite.prepare('SELECT kwh, flags FROM meter_days WHERE meter_id = ? AND day = ?').get(meterId, d) as
      | { kwh: Buffer; flags: Buffer }
      | undefined;
    if (!row) return null;
    const kwh = storedKwh(row.kwh);
    return { kwh, flags: storedFlags(row.flags, row.kwh, kwh.length) };
  };

  before(async () => {
    ({ server, admin, main, hvac, rest } = await importSite(ZONE));
  });
  after(() => server.close());

  test('a dry run reports per meter and writes nothing; the import writes, measured and audited; the virtual meter follows', async () => {
    const d = day(-20);
    const csv = intervalsCsv([
      { code: 'meter.main.kwh', days: [d], kwh: () => 1 },
      { code: String(hvac.id), days: [d], kwh: (i) => (i < 48 ? 0.25 : 0.5) },
    ]);
    const dry = await post(csv, '?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.accepted, true);
    assert.equal(dry.body.written, false);
    assert.equal(dry.body.form, 'intervals');
    assert.equal(dry.body.rows, 192);
    const mainReport = dry.body.meters.find((m: { meterId: number }) => m.meterId === main.id);
    assert.deepEqual(mainReport.intervals, { new: 96, overlapping: 0, refused: 0, estimated: 0 });
    assert.equal(mainReport.days, 1);
    assert.equal(mainReport.kwh, 96);
    assert.equal(mainReport.from, d);
    assert.equal(dry.body.meters.find((m: { meterId: number }) => m.meterId === hvac.id).kwh, 36);
    assert.equal(rows(main.id, d), null, 'a dry run writes nothing');
    assert.equal(await dayKwh(main.id, d), null);

    const done = await post(csv);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.written, true);
    assert.equal(await dayKwh(main.id, d), 96);
    assert.equal(await dayKwh(hvac.id, d), 36);
    assert.equal(await dayKwh(rest.id, d), 60, 'the virtual meter is rebuilt from the imported terms');
    const stored = rows(main.id, d)!;
    assert.ok(
      stored.flags.every((flag) => flag === FLAG_IMPORTED),
      'every interval marked imported',
    );
    // Measured: the completeness and the CSV export say so.
    const completeness = await get(`/api/energy/completeness?from=${d}&to=${addDays(d, 1)}&meterId=${main.id}`);
    assert.equal(completeness.meters[0].measured, 1);
    const exported = await server.request('GET', `/api/energy/export.csv?meterId=${main.id}&from=${d}&to=${addDays(d, 1)}`, { token: admin.accessToken });
    const first = exported.text.split('\n')[1].split(',');
    assert.deepEqual([first[2], first[4], first[5]], ['1', String(FLAG_IMPORTED), 'measured']);
    // The month rollup moved with it.
    const month = await get(`/api/energy/series?meterId=${main.id}&from=${d.slice(0, 8)}01&to=${addDays(d, 1)}&resolution=month`);
    assert.equal(month.points[0].kwh, 96);
    const audit = await get('/api/audit?resource=energy_history&action=import');
    assert.equal(audit.items.length, 1);
    assert.equal(audit.items[0].username, admin.user.username);
    assert.match(JSON.stringify(audit.items[0].after), /"kwh":96/);
  });

  test('an overlap is refused (409, nothing written) unless replace; a dry run shows it', async () => {
    const d = day(-30);
    assert.equal((await post(intervalsCsv([{ code: 'meter.main.kwh', days: [d], kwh: () => 1 }]))).status, 200);
    // Half of the day again, and a day that is new.
    const again = intervalsCsv([
      { code: 'meter.main.kwh', days: [d], kwh: () => 2 },
      { code: 'meter.main.kwh', days: [addDays(d, 1)], kwh: () => 3 },
    ]);
    const dry = await post(again, '?dryRun=true');
    assert.equal(dry.status, 200);
    assert.equal(dry.body.accepted, false);
    assert.deepEqual(dry.body.meters[0].intervals, { new: 96, overlapping: 96, refused: 0, estimated: 0 });
    const refused = await post(again);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, 'CONFLICT');
    assert.match(refused.body.details[0].message, /96 intervals/);
    assert.equal(await dayKwh(main.id, d), 96, 'the stored day kept');
    assert.equal(await dayKwh(main.id, addDays(d, 1)), null, 'the new day not written either');

    const replaced = await post(again, '?replace=true');
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(replaced.body.meters[0].intervals, { new: 96, overlapping: 96, refused: 0, estimated: 0 });
    assert.equal(await dayKwh(main.id, d), 192);
    assert.equal(await dayKwh(main.id, addDays(d, 1)), 288);
    // Lower values replacing higher ones: the month's peak is taken again from its days, not kept from before.
    const lower = await post(intervalsCsv([{ code: 'meter.main.kwh', days: [d, addDays(d, 1)], kwh: () => 0.5 }]), '?replace=true');
    assert.equal(lower.status, 200);
    const peak = server.service.deps.db.sqlite
      .prepare('SELECT peak_kw FROM meter_months WHERE meter_id = ? AND month = ?')
      .pluck()
      .get(main.id, d.slice(0, 7)) as number;
    const dayPeaks = server.service.deps.db.sqlite
      .prepare("SELECT max(peak_kw) FROM meter_days WHERE meter_id = ? AND day LIKE ? || '%'")
      .pluck()
      .get(main.id, d.slice(0, 7)) as number;
    assert.equal(peak, dayPeaks);
  });

  test('bad rows: 400 naming each line, nothing written', async () => {
    const d = day(-40);
    const { start } = dayIntervals(ZONE, d);
    const csv = [
      'meter,start,kwh',
      `meter.main.kwh,${iso(start)},1`,
      `meter.nowhere.kwh,${iso(start)},1`,
      `meter.main.kwh,yesterday,1`,
      `meter.main.kwh,${iso(start + 5 * 60_000)},1`,
      `meter.main.kwh,${iso(start + Q)},one`,
      `meter.main.kwh,${iso(start)},2`,
      `${rest.id},${iso(start)},1`,
      `meter.main.kwh,${iso(start + 2 * Q).replace('Z', '')},1`,
    ].join('\n');
    const response = await post(csv);
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.code, 'VALIDATION');
    const lines = response.body.details.map((detail: { path: string }) => detail.path);
    assert.deepEqual(lines, ['line 3', 'line 4', 'line 5', 'line 6', 'line 7', 'line 8', 'line 9']);
    assert.match(response.body.details[0].message, /unknown meter/);
    assert.match(response.body.details[2].message, /15-minute boundary/);
    assert.match(response.body.details[4].message, /already in the file/);
    assert.match(response.body.details[5].message, /virtual/);
    assert.match(response.body.details[6].message, /zone/);
    assert.equal(rows(main.id, d), null, 'nothing written, not even the good row');
    // The dry run refuses a malformed file the same way.
    assert.equal((await post(csv, '?dryRun=true')).status, 400);
    const header = await post('meter;when;value\n1;2025-01-01T00:00Z;1\n');
    assert.equal(header.status, 400);
    assert.equal(header.body.details[0].path, 'line 1');
    assert.equal((await post('')).status, 400);
  });

  test('refused rows (future, today, too old, negative, implausible): listed by a dry run, a 400 for the import', async () => {
    const d = day(-50);
    const { start } = dayIntervals(ZONE, d);
    const now = Date.now();
    const csv = [
      'meter;start;kwh',
      `meter.hvac.kwh;${iso(start)};1,5`,
      `meter.hvac.kwh;${iso(Math.floor(now / Q) * Q + 4 * Q)};1`,
      `meter.hvac.kwh;${iso(dayIntervals(ZONE, siteDay(ZONE, new Date(now))).start)};1`,
      `meter.hvac.kwh;${iso(dayIntervals(ZONE, addDays(siteDay(ZONE, new Date(now)), -4000)).start)};1`,
      `meter.hvac.kwh;${iso(start + Q)};-0,5`,
      `meter.hvac.kwh;${iso(start + 2 * Q)};99999`,
    ].join('\n');
    const dry = await post(csv, '?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.accepted, false);
    const report = dry.body.meters[0];
    assert.equal(report.intervals.refused, 5);
    assert.equal(report.intervals.new, 1);
    assert.equal(report.kwh, 1.5, 'a decimal comma with semicolons');
    assert.deepEqual(
      report.refused.map((row: { line: number }) => row.line),
      [3, 4, 5, 6, 7],
    );
    assert.match(report.refused[0].message, /future/);
    assert.match(report.refused[1].message, /today/);
    assert.match(report.refused[2].message, /days ago/);
    assert.match(report.refused[3].message, /negative/);
    assert.match(report.refused[4].message, /more than any real load/);
    const response = await post(csv);
    assert.equal(response.status, 400);
    assert.deepEqual(
      response.body.details.map((detail: { path: string }) => detail.path),
      ['line 3', 'line 4', 'line 5', 'line 6', 'line 7'],
    );
    assert.equal(rows(hvac.id, d), null);
  });

  test('counter readings: steps counted like live ones (jitter held, reset, hourly spans estimated, a long gap left missing)', async () => {
    const d = day(-60);
    const { start } = dayIntervals(ZONE, d);
    const at = (i: number) => iso(start + i * Q);
    const csv = [
      'meter,time,reading',
      `meter.main.kwh,${at(0)},100.0`,
      `meter.main.kwh,${at(2)},101.0`, // lines out of order are sorted
      `meter.main.kwh,${at(1)},100.5`,
      `meter.main.kwh,${at(3)},100.95`, // jitter: held at 101.0, counts 0
      `meter.main.kwh,${at(4)},101.45`, // 0.45 from the held 101.0
      `meter.main.kwh,${at(5)},2.0`, // a reset: 2.0 since it
      `meter.main.kwh,${at(9)},6.0`, // an hour: 4 kWh spread over 4 intervals, estimated
      `meter.main.kwh,${iso(start + 9 * Q + 8 * 86_400_000)},7.0`, // more than 7 days later: not spread
    ].join('\n');
    const response = await post(csv);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.form, 'counter');
    const report = response.body.meters[0];
    assert.deepEqual([report.jitter, report.resets, report.gaps], [1, 1, 1]);
    assert.deepEqual(report.intervals, { new: 9, overlapping: 0, refused: 0, estimated: 4 });
    const stored = rows(main.id, d)!;
    assert.deepEqual(Array.from(stored.kwh.slice(0, 10)), [0.5, 0.5, 0, 0.45, 2, 1, 1, 1, 1, NaN]);
    assert.equal(stored.flags[2], FLAG_IMPORTED | FLAG_JITTER);
    assert.equal(stored.flags[4], FLAG_IMPORTED | FLAG_RESET);
    assert.equal(stored.flags[5], FLAG_IMPORTED | FLAG_ESTIMATED);
    assert.equal(stored.flags[0], FLAG_IMPORTED);
    assert.equal(rows(main.id, addDays(d, 3)), null, 'the 8-day gap stays missing');

    // An implausible step is refused with its line.
    const jump = await post(['meter,time,reading', `meter.hvac.kwh,${at(0)},10`, `meter.hvac.kwh,${at(1)},900000`].join('\n'));
    assert.equal(jump.status, 400);
    assert.deepEqual(
      jump.body.details.map((detail: { path: string }) => detail.path),
      ['line 3'],
    );
    assert.equal(rows(hvac.id, d), null);
  });

  test('two imports at once never count twice', async () => {
    const d = day(-70);
    const csv = intervalsCsv([{ code: 'meter.main.kwh', days: [d, addDays(d, 1), addDays(d, 2)], kwh: () => 1 }]);
    // Twelve in flight at once: one writes, each other one finds its intervals stored.
    const all = await Promise.all(Array.from({ length: 12 }, () => post(csv)));
    const statuses = all.map((response) => response.status).sort();
    assert.deepEqual(statuses, [200, ...Array(11).fill(409)], all.map((response) => response.text.slice(0, 120)).join('\n'));
    assert.equal(await dayKwh(main.id, d), 96);
    // Both replacing at once: each writes the file's values, neither adds to the other's.
    const replaced = await Promise.all(Array.from({ length: 12 }, () => post(csv, '?replace=true')));
    assert.deepEqual(
      replaced.map((response) => response.status),
      Array(12).fill(200),
    );
    assert.ok(
      replaced.every((response) => response.body.meters[0].intervals.overlapping === 288),
      'each one replaced the same intervals',
    );
    const month = await get(`/api/energy/series?meterId=${main.id}&from=${d}&to=${addDays(d, 3)}&resolution=day`);
    assert.deepEqual(
      month.points.map((point: { kwh: number }) => point.kwh),
      [96, 96, 96],
    );
    const rollup = server.service.deps.db.sqlite
      .prepare('SELECT sum(total_kwh) FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ?')
      .pluck()
      .get(main.id, d, addDays(d, 3));
    assert.equal(rollup, 288);
  });

  test('an upload cut off half-way writes nothing and is no server error', async () => {
    const d = day(-80);
    const csv = intervalsCsv([{ code: 'meter.main.kwh', days: [d, addDays(d, 1)], kwh: () => 1 }]);
    const half = Buffer.from(csv.slice(0, Math.floor(csv.length / 2)));
    const url = new URL(`${server.url}/api/energy/import`);
    const logsBefore = server.logs.length;
    await new Promise<void>((resolve) => {
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': 'text/csv', 'content-length': csv.length },
      });
      request.on('error', () => resolve());
      request.on('response', () => resolve());
      request.write(half, () => setTimeout(() => request.destroy(), 200));
    });
    // The request is logged with the status it was answered with: 400 (the client is gone), never a 5xx.
    const logged = await eventually(
      async () =>
        server.logs
          .slice(logsBefore)
          .find(
            (line) =>
              line.includes('"route":"/api/energy/import"') &&
              line.includes('"msg":"request"') &&
              line.includes(`"userId":${admin.user.id}`) &&
              /"status":[45]\d\d/.test(line),
          ),
      'the aborted import logged',
    );
    assert.match(logged, /"status":400/);
    assert.equal(rows(main.id, d), null, 'nothing written');
    assert.equal((await post(csv)).status, 200, 'the whole file then imports');
  });

  test('admin only, CSV only; the reference shows the body with its example', async () => {
    const operator = await server.createUser({ role: 'operator' });
    assert.equal((await post('meter,start,kwh\n', '', operator.accessToken)).status, 403);
    const json = await post('{"rows":[]}', '', admin.accessToken, 'application/json');
    assert.equal(json.status, 415);
    const gzipped = await server.request('POST', '/api/energy/import', {
      token: admin.accessToken,
      raw: 'x',
      headers: { 'content-type': 'text/csv', 'content-encoding': 'gzip' },
    });
    assert.equal(gzipped.status, 415);
    assert.equal((await post('meter,start,kwh\n', '?replace=maybe')).status, 400);
    const doc = (await server.request('GET', '/documentation/json')).body;
    const content = doc.paths['/api/energy/import'].post.requestBody.content['text/csv'];
    assert.match(content.example, /^meter,start,kwh\n/);
    assert.ok(doc.paths['/api/energy/import'].post.responses['409']);
  });
});
