// The gateway port (src/gateway/port.ts) against a gateway that answers scripted bytes over real HTTP: each call's
// answer is typed and checked in the port, wrong shapes, non-finite numbers and times outside the asked span included.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayClient } from '../../src/gateway/client.ts';
import { BadGateway } from '../../src/platform/errors.ts';
import { gatewayPort, GatewayRefused, type GatewayPort } from '../../src/gateway/index.ts';

/** The next answer per path: status and the raw body text. */
const script = new Map<string, { status: number; body: string }>();
const seen: { path: string; body: string }[] = [];
let server: http.Server;
let client: GatewayClient;
let port: GatewayPort;

before(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '').split('?')[0];
      seen.push({ path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      const answer = script.get(path) ?? { status: 404, body: '{"error":"not found"}' };
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new GatewayClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 5000);
  port = gatewayPort((method, path, input) => client.exchange({ method, path, ...input }));
});

after(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

function answer(path: string, status: number, body: string): void {
  script.set(path, { status, body });
}

test('values: typed rows; a non-finite or non-number value is null, a missing time null, a bad quality not good', async () => {
  answer(
    '/codes/values',
    200,
    '{"data":[{"code":"a","value":12.5,"quality":"good","ts":"2026-01-01T00:00:00Z"},{"code":"b","value":1e999},' +
      '{"code":"c","value":"12","ts":"yesterday"},{"code":"d","value":true,"quality":"bad"},{"value":3},7,null,["code"]]}',
  );
  const rows = await port.values(['a', 'b', 'c', 'd']);
  assert.deepEqual(rows, [
    { code: 'a', at: Date.parse('2026-01-01T00:00:00Z'), good: true, value: 12.5 },
    { code: 'b', at: null, good: true, value: null },
    { code: 'c', at: null, good: true, value: null },
    { code: 'd', at: null, good: false, value: true },
  ]);
  assert.deepEqual(JSON.parse(seen.at(-1)!.body), { codes: ['a', 'b', 'c', 'd'] });
});

test('values: a refusal is a GatewayRefused (502 to a client) with the gateway status; no data list is a BadGateway', async () => {
  answer('/codes/values', 503, '{"error":"busy"}');
  const refused = await port.values(['a']).then(
    () => assert.fail('no error'),
    (error: unknown) => error,
  );
  assert.ok(refused instanceof GatewayRefused);
  assert.equal(refused.gatewayStatus, 503);
  assert.equal(refused.status, 502);
  assert.equal(refused.message, 'the gateway answered 503 to codes/values');
  for (const body of ['{"data":{"code":"a"}}', '[]', 'null', '{}']) {
    answer('/codes/values', 200, body);
    await assert.rejects(port.values(['a']), (error: unknown) => error instanceof BadGateway && !(error instanceof GatewayRefused), body);
  }
  answer('/codes/values', 200, '{"data":');
  await assert.rejects(port.values(['a']), BadGateway, 'a body that is not JSON');
});

test('history: rows outside the asked span, without a time or with a non-finite value are dropped; 404 is null', async () => {
  const from = Date.parse('2026-03-01T00:00:00Z');
  const to = from + 3600_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  answer(
    '/codes/history',
    200,
    `{"data":[{"ts":"${iso(from - 1)}","value":1},{"ts":"${iso(from)}","value":2},{"ts":"${iso(to)}","value":3},` +
      `{"ts":"${iso(to + 1)}","value":4},{"ts":"9999-01-01T00:00:00Z","value":5},{"ts":"${iso(from + 60_000)}","value":-1e999},` +
      `{"ts":"${iso(from + 120_000)}","value":"6"},{"value":7},{"ts":12,"value":8},{"ts":"${iso(from + 180_000)}","value":9}]}`,
  );
  assert.deepEqual(await port.history('m', from, to), [
    { at: from, value: 2 },
    { at: to, value: 3 },
    { at: from + 180_000, value: 9 },
  ]);
  assert.deepEqual(JSON.parse(seen.at(-1)!.body), { code: 'm', start: iso(from), end: iso(to) });
  answer('/codes/history', 404, '{"error":"no history"}');
  assert.equal(await port.history('m', from, to), null);
  answer('/codes/history', 400, '{"error":"bad code"}');
  await assert.rejects(port.history('m', from, to), (error: unknown) => error instanceof GatewayRefused && error.gatewayStatus === 400);
  answer('/codes/history', 200, '{"data":"none"}');
  await assert.rejects(port.history('m', from, to), { message: 'the gateway answered codes/history without a data list' });
});

test('history on a grid: the optional step sent; values on the grid typed (NaN for none, non-finite or outside the span); a plain answer is the readings; a wrong step refused', async () => {
  const from = Date.parse('2026-01-01T00:00:00Z');
  const to = from + 20 * 60_000;
  answer('/codes/history', 200, '{"start":"2026-01-01T00:00:00.000Z","step":300,"values":[1.5,null,"2",1e999,7,8]}');
  const grid = await port.historyOnGrid!('m', from, to, 300_000);
  assert.deepEqual(JSON.parse(seen.at(-1)!.body), { code: 'm', start: '2026-01-01T00:00:00.000Z', end: '2026-01-01T00:20:00.000Z', step: 300 });
  assert.ok(grid && 'grid' in grid);
  assert.equal(grid.grid.first, from);
  assert.equal(grid.grid.stepMs, 300_000);
  // The sixth value stands at 00:25, past the span asked.
  assert.deepEqual(
    [...grid.grid.values].map((v) => (Number.isNaN(v) ? null : v)),
    [1.5, null, null, null, 7, null],
  );
  // A gateway that predates the step answers as ever: the readings, as history gives them.
  answer('/codes/history', 200, '{"data":[{"ts":"2026-01-01T00:05:00Z","value":4},{"ts":"2026-01-01T01:00:00Z","value":5}]}');
  assert.deepEqual(await port.historyOnGrid!('m', from, to, 300_000), { points: [{ at: from + 300_000, value: 4 }] });
  answer('/codes/history', 200, '{"start":"2026-01-01T00:00:00.000Z","step":600,"values":[1]}');
  await assert.rejects(port.historyOnGrid!('m', from, to, 300_000), (error: unknown) => error instanceof BadGateway);
  answer('/codes/history', 404, '{"error":"no history"}');
  assert.equal(await port.historyOnGrid!('m', from, to, 300_000), null);
});

test('codes: the catalogue typed (non-string fields null, rows without a code dropped); 404 is null; a refusal throws', async () => {
  answer('/codes', 200, '{"data":[{"code":"p1","name":"Main","unit":"kWh","kind":"energy"},{"code":"p2","name":5,"kind":null},{"name":"x"},"p3"]}');
  assert.deepEqual(await port.codes(), [
    { code: 'p1', name: 'Main', unit: 'kWh', kind: 'energy' },
    { code: 'p2', name: null, unit: null, kind: null },
  ]);
  answer('/codes', 404, '{"error":"no catalogue"}');
  assert.equal(await port.codes(), null);
  answer('/codes', 500, '{"error":"x"}');
  await assert.rejects(port.codes(), { message: 'the gateway answered 500 without a point catalogue' });
  answer('/codes', 200, '{"data":null}');
  await assert.rejects(port.codes(), { message: 'the gateway answered 200 without a point catalogue' });
});

test('set: the status and success as answered, never thrown on a status', async () => {
  answer('/codes/set', 200, '{"success":true}');
  assert.deepEqual(await port.set('relay.1', 0), { status: 200, success: true });
  assert.deepEqual(JSON.parse(seen.at(-1)!.body), { code: 'relay.1', value: 0 });
  answer('/codes/set', 503, '{"success":"maybe"}');
  assert.deepEqual(await port.set('relay.1', 1), { status: 503, success: null });
});

test('alarms: the query sent, rows typed, a page without a data list empty, a total that is not a number NaN', async () => {
  answer(
    '/alarms',
    200,
    '{"data":[{"id":1,"code":"AL1","level":"critical","message":"hot","raisedAt":"2026-01-01T00:00:00Z","clearedAt":null},{"code":7},null],"total":3}',
  );
  const page = await port.alarms({ start: '2026-01-01T00:00:00.000Z', page: 2, pageSize: 200 });
  assert.deepEqual(page, {
    rows: [
      { code: 'AL1', level: 'critical', message: 'hot', raisedAt: '2026-01-01T00:00:00Z', clearedAt: null },
      { code: null, level: null, message: null, raisedAt: null, clearedAt: null },
      { code: null, level: null, message: null, raisedAt: null, clearedAt: null },
    ],
    total: 3,
  });
  assert.equal(seen.at(-1)!.path, '/alarms?start=2026-01-01T00%3A00%3A00.000Z&page=2&pageSize=200');
  answer('/alarms', 200, '{"total":"many"}');
  const empty = await port.alarms({ start: '2026-01-01T00:00:00.000Z', page: 1, pageSize: 200 });
  assert.deepEqual(empty.rows, []);
  assert.ok(Number.isNaN(empty.total));
  answer('/alarms', 502, '{}');
  await assert.rejects(port.alarms({ start: '2026-01-01T00:00:00.000Z', page: 1, pageSize: 200 }), { message: 'the gateway answered 502' });
});
