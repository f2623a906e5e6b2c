// The history import as a background job (issue 52, the staff app's import screen), over real HTTP: the file is
// checked in the request (400/409 queue nothing), the job tells its progress and report; a cancel between two slices
// takes back every interval written so far (missing again, or the old values with replace), the virtual meter and the
// month figures follow, audited as import.cancel. The dry run reports empty cells and missing intervals.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { eventually, type TestServer, type TestUser } from '../helpers/server.ts';
import { importSite, intervalsCsv as zonedCsv } from '../helpers/importSite.ts';
import { noonZone } from '../helpers/siteClock.ts';

const Q = 15 * 60_000;
const ZONE = noonZone();
const today = siteDay(ZONE);
const day = (offset: number) => addDays(today, offset);
const iso = (ms: number) => new Date(ms).toISOString();
const span = (from: number, count: number) => Array.from({ length: count }, (_, i) => day(from + i));

const intervalsCsv = (rows: Parameters<typeof zonedCsv>[1], header?: string) => zonedCsv(ZONE, rows, header);

describe('history import jobs', () => {
  let server: TestServer;
  let admin: TestUser;
  let main: { id: number };
  let hvac: { id: number };
  let rest: { id: number };

  const postJob = (csv: string, query = '', token = admin.accessToken) =>
    server.request('POST', `/api/energy/import/jobs${query}`, { token, raw: csv, headers: { 'content-type': 'text/csv' } });
  const job = async (id: number) => {
    const response = await server.request('GET', `/api/energy/import/jobs/${id}`, { token: admin.accessToken });
    assert.equal(response.status, 200, response.text);
    return response.body;
  };
  const ended = (id: number) =>
    eventually(async () => {
      const body = await job(id);
      return ['done', 'cancelled', 'failed'].includes(body.state) ? body : undefined;
    }, `import job ${id} to end`);
  const sqlite = () => server.service.deps.db.sqlite;
  const dayRows = (meterId: number, days: string[]) =>
    sqlite()
      .prepare(`SELECT count(*) FROM meter_days WHERE meter_id = ? AND day IN (${days.map(() => '?').join(',')})`)
      .pluck()
      .get(meterId, ...days) as number;
  const monthKwh = (meterId: number) =>
    sqlite().prepare('SELECT coalesce(sum(total_kwh), 0) FROM meter_months WHERE meter_id = ?').pluck().get(meterId) as number;
  const dayKwh = (meterId: number, d: string) =>
    sqlite().prepare('SELECT total_kwh FROM meter_days WHERE meter_id = ? AND day = ?').pluck().get(meterId, d) as number | undefined;

  before(async () => {
    ({ server, admin, main, hvac, rest } = await importSite(ZONE));
  });
  after(() => server.close());

  test('a dry run counts empty cells and the missing intervals of the span; a job writes with progress and ends with the report', async () => {
    const days = span(-700, 3);
    // Main: every 10th cell empty; HVAC: its second day left out of the file.
    const csv = intervalsCsv([
      { code: 'meter.main.kwh', days, kwh: (i) => (i % 10 === 0 ? '' : 1) },
      { code: 'meter.hvac.kwh', days: [days[0], days[2]], kwh: () => 0.5 },
    ]);
    const dry = await server.request('POST', '/api/energy/import?dryRun=true', { token: admin.accessToken, raw: csv, headers: { 'content-type': 'text/csv' } });
    assert.equal(dry.status, 200, dry.text);
    const mainReport = dry.body.meters.find((m: { meterId: number }) => m.meterId === main.id);
    const hvacReport = dry.body.meters.find((m: { meterId: number }) => m.meterId === hvac.id);
    const cells = days.reduce((sum, d) => sum + dayIntervals(ZONE, d).count, 0);
    assert.equal(
      mainReport.empty,
      days.reduce((sum, d) => sum + Math.ceil(dayIntervals(ZONE, d).count / 10), 0),
    );
    // The first cell of the file is empty (i = 0), so the span starts at the second: the missing are the empty cells after it.
    assert.equal(mainReport.missing, mainReport.empty - 1);
    assert.equal(hvacReport.empty, 0);
    assert.equal(hvacReport.missing, dayIntervals(ZONE, days[1]).count);

    const started = await postJob(csv);
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.state, 'running');
    assert.equal(started.body.meters, 2);
    const done = await ended(started.body.id);
    assert.equal(done.state, 'done', JSON.stringify(done.error));
    assert.ok(done.total > 0 && done.done === done.total, `progress ${done.done}/${done.total}`);
    assert.equal(done.report.written, true);
    assert.equal(done.report.meters.find((m: { meterId: number }) => m.meterId === main.id).intervals.new, cells - mainReport.empty);
    assert.equal(dayRows(rest.id, days), 3);
  });

  test('checked in the request: refused rows 400 and an overlap 409 queue nothing; a job unknown 404, an ended one cannot be cancelled', async () => {
    const d = day(-700);
    const overlap = await postJob(intervalsCsv([{ code: 'meter.main.kwh', days: [d], kwh: () => 2 }]));
    assert.equal(overlap.status, 409, overlap.text);
    const future = await postJob(`meter,start,kwh\nmeter.main.kwh,${iso(Date.now() + 7 * 86_400_000 - ((Date.now() + 7 * 86_400_000) % Q))},1\n`);
    assert.equal(future.status, 400, future.text);
    assert.match(future.body.details[0].path, /^line 2$/);
    assert.equal((await server.request('GET', '/api/energy/import/jobs/999999', { token: admin.accessToken })).status, 404);
    const viewer = await server.createUser({ role: 'operator' });
    assert.equal((await postJob('meter,start,kwh\n', '', viewer.accessToken)).status, 403);
    const small = await postJob(intervalsCsv([{ code: 'meter.main.kwh', days: [day(-650)], kwh: () => 1 }]));
    assert.equal(small.status, 202, small.text);
    assert.equal((await ended(small.body.id)).state, 'done');
    const late = await server.request('POST', `/api/energy/import/jobs/${small.body.id}/cancel`, { token: admin.accessToken });
    assert.equal(late.status, 409, late.text);
  });

  test('two jobs of one file at once: both pass the check, one writes, the other fails its own check at its turn (409), nothing counted twice', async () => {
    const days = span(-60, 3);
    const csv = intervalsCsv([{ code: 'meter.hvac.kwh', days, kwh: () => 0.5 }]);
    // The collector's turn held while both are posted: neither writes before both are checked (else the second is a 409 at once).
    let release!: () => void;
    const held = server.service.deps.collector.exclusive(() => new Promise<void>((resolve) => (release = resolve)));
    const answers = await Promise.all([postJob(csv), postJob(csv)]);
    release();
    await held;
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [202, 202],
    );
    const ends = await Promise.all(answers.map((answer) => ended(answer.body.id)));
    assert.deepEqual(ends.map((end) => end.state).sort(), ['done', 'failed']);
    const failed = ends.find((end) => end.state === 'failed');
    assert.equal(failed.error.code, 'CONFLICT');
    assert.match(failed.error.error, /overlaps intervals already stored/);
    const cells = days.reduce((sum, d) => sum + dayIntervals(ZONE, d).count, 0);
    const total = sqlite()
      .prepare(`SELECT sum(total_kwh) FROM meter_days WHERE meter_id = ? AND day IN (${days.map(() => '?').join(',')})`)
      .pluck()
      .get(hvac.id, ...days) as number;
    assert.ok(Math.abs(total - cells * 0.5) < 1e-6, `${total} kWh, once`);
  });

  test('a cancel between two slices takes back what was written: new days gone, replaced intervals their old values, months and the virtual meter too', async () => {
    const collector = server.service.deps.collector;
    const old = span(-502, 2);
    const fresh = span(-500, 400);
    const first = await postJob(intervalsCsv([{ code: 'meter.main.kwh', days: old, kwh: () => 3 }]));
    assert.equal(first.status, 202, first.text);
    assert.equal((await ended(first.body.id)).state, 'done');
    const before = { main: monthKwh(main.id), hvac: monthKwh(hvac.id), rest: monthKwh(rest.id), oldDay: dayKwh(main.id, old[0]) };
    const auditCount = () => sqlite().prepare("SELECT count(*) FROM audit_log WHERE action = 'import.start'").pluck().get() as number;
    const starts = auditCount();

    // The test holds the collector's turn: the job's first slice waits behind it, the test's second turn behind that slice.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = collector.exclusive(() => gate);
    const csv = intervalsCsv([
      { code: 'meter.main.kwh', days: [...old, ...fresh], kwh: () => 1 },
      { code: 'meter.hvac.kwh', days: fresh, kwh: () => 0.25 },
    ]);
    const started = await postJob(csv, '?replace=true');
    assert.equal(started.status, 202, started.text);
    await eventually(async () => (auditCount() > starts ? true : undefined), 'the job to start writing');
    let written = 0;
    const cancelled = collector.exclusive(async () => {
      // One slice is in: part of the file is stored (the half-written state a cancel must not leave).
      written = dayRows(hvac.id, fresh);
      const response = await server.request('POST', `/api/energy/import/jobs/${started.body.id}/cancel`, { token: admin.accessToken });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.state, 'cancelling');
    });
    release();
    await held;
    await cancelled;
    const end = await ended(started.body.id);
    assert.equal(end.state, 'cancelled');
    assert.ok(written > 0 && written < fresh.length, `one slice wrote part of the file (${written} of ${fresh.length} days)`);
    assert.ok(end.done > 0 && end.done < end.total, `progress stopped part-way (${end.done}/${end.total})`);
    assert.ok(end.undone > 0);
    assert.equal(end.report, null);
    assert.equal(dayRows(hvac.id, fresh), 0);
    assert.equal(dayRows(main.id, fresh), 0);
    assert.equal(dayKwh(main.id, old[0]), before.oldDay);
    assert.ok(Math.abs(monthKwh(main.id) - before.main) < 1e-6);
    assert.ok(Math.abs(monthKwh(hvac.id) - before.hvac) < 1e-6);
    assert.ok(Math.abs(monthKwh(rest.id) - before.rest) < 1e-6);
    assert.equal(dayRows(rest.id, fresh), 0);
    const audit = sqlite().prepare("SELECT count(*) FROM audit_log WHERE action = 'import.cancel'").pluck().get() as number;
    assert.equal(audit, 1);
  });
});
