// Issue 39 #5: a history import takes \n, \r\n and a lone \r ("CSV (Macintosh)") as line ends, in linear time; a line
// longer than IMPORT_MAX_LINE is a 400 naming it, and a header of unknown names is quoted back short, never echoed whole.
// (Time and memory of a multi-MiB CR-only file: npm run bench:import-lines.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CsvPlanner, IMPORT_MAX_LINE } from '../../src/metering/importPlan.ts';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const Q = 15 * 60_000;

/** `days` days of 15-minute rows for meter.main.kwh ending yesterday, each line ended by `end`. */
function csv(days: number, end: string): string {
  const today = siteDay('UTC');
  const lines = ['meter,start,kwh'];
  for (let d = days; d >= 1; d -= 1) {
    const { start, count } = dayIntervals('UTC', addDays(today, -d));
    for (let i = 0; i < count; i += 1) lines.push(`meter.main.kwh,${new Date(start + i * Q).toISOString()},1.5`);
  }
  return lines.join(end) + end;
}

describe('line ends of a history import', () => {
  test('a \\r\\n split across two chunks is one line end; a lone \\r ends a line', () => {
    const planner = new CsvPlanner([], 'UTC', Date.now());
    const seen = [...planner.lines('a,b\r'), ...planner.lines('\nc,d\re,f\r'), ...planner.lines('g,h\n'), ...planner.lines('i')];
    assert.deepEqual(seen, ['a,b', 'c,d', 'e,f', 'g,h']);
  });

  test('a line longer than the cap is refused with its number, also when it never ends', () => {
    const planner = new CsvPlanner([], 'UTC', Date.now());
    assert.deepEqual(planner.lines('meter,start,kwh\r# a comment\r'), ['meter,start,kwh', '# a comment']);
    for (const line of ['meter,start,kwh', '# a comment']) planner.takeLine(line);
    assert.throws(
      () => {
        for (let i = 0; i < 100; i += 1) planner.lines('x'.repeat(1024));
      },
      (error: { status?: number; message: string }) => error.status === 400 && /^Line 3 is longer than 65536 characters/.test(error.message),
    );
    assert.equal(IMPORT_MAX_LINE, 65536);
  });
});

describe('a CR-only history import over HTTP', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const meter = await server.request('POST', '/api/meters', { token, body: { name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true } });
    assert.equal(meter.status, 201, meter.text);
  });
  after(() => server.close());
  const post = (body: string) => server.request('POST', '/api/energy/import?dryRun=true', { token, raw: body, headers: { 'content-type': 'text/csv' } });

  test('a multi-MiB CR-only file is read row by row, exactly as the same file with \\n; \\r\\n too', async () => {
    const days = 1000; // 96,000 rows, 4.5 MB: before, one header line of every field, a 400 echoing the whole file
    const cr = csv(days, '\r');
    assert.ok(!cr.includes('\n') && cr.length > 4 * 1024 * 1024, `${cr.length}`);
    const [byCr, byLf] = await Promise.all([post(cr), post(csv(days, '\n'))]);
    for (const answer of [byCr, byLf]) {
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.equal(answer.body.rows, days * 96);
    }
    assert.deepEqual(byCr.body, byLf.body);
    assert.ok(byCr.text.length < 20_000, `${byCr.text.length} characters answered`);
    const [crShort, crlfShort] = await Promise.all([post(csv(30, '\r')), post(csv(30, '\r\n'))]);
    assert.equal(crlfShort.status, 200, crlfShort.text.slice(0, 300));
    assert.deepEqual(crShort.body, crlfShort.body);
  });

  test('a header of unknown names lists at most 20 names of at most 40 characters', async () => {
    const names = Array.from({ length: 500 }, (_, i) => `column_${i}_${'n'.repeat(60)}`);
    const answer = await post(`${names.join(',')}\rrow\r`);
    assert.equal(answer.status, 400, answer.text.slice(0, 300));
    const detail: string = answer.body.details[0].message;
    const listed = detail.split('found: ')[1]!.split(' and ')[0]!.split(', ');
    assert.equal(listed.length, 20);
    assert.ok(listed.every((name) => name.length <= 40));
    assert.match(detail, /and 480 more$/);
    assert.ok(answer.text.length < 2000, `${answer.text.length} characters answered`);
  });

  test('a line over 64 KiB is a 400 naming it', async () => {
    const answer = await post(`meter,start,kwh\rmeter.main.kwh,2020-01-01T00:00:00Z,1\r${'9'.repeat(70_000)}\r`);
    assert.equal(answer.status, 400, answer.text.slice(0, 300));
    assert.match(answer.body.error, /^Line 3 is longer than 65536 characters/);
    assert.ok(answer.text.length < 1000);
  });
});
