// GET /metrics: a scraper with EMS_METRICS_TOKEN reads health and per-meter figures that a Prometheus text parser from
// npm accepts and that agree with the API; no or a wrong token is 401, and without the variable there is no /metrics.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { addDays } from '../../src/platform/time/calendar.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { seedYear, type SeededYear } from '../helpers/seededYear.ts';

const TOKEN = 'scrape-me-0123456789abcdef';

type Parsed = { name: string; type: string; metrics: { value: string; labels?: Record<string, string> }[] }[];

describe('/metrics', () => {
  let server: TestServer;
  let admin: TestUser;
  let seeded: SeededYear;

  before(async () => {
    server = await startTestServer({ EMS_METRICS_TOKEN: TOKEN });
    admin = await server.createUser({ role: 'admin' });
    seeded = seedYear(server, 'UTC', { days: 3 });
    server.service.deps.db.sqlite
      .prepare('INSERT INTO meter_state (meter_id, last_at, last_value, demand_kw) VALUES (?, ?, 0, ?)')
      .run(seeded.meterIds[0], Date.now(), 42.5);
  });
  after(() => server.close());

  const scrape = (headers: Record<string, string> = {}) => fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}`, ...headers } });

  test('Prometheus text: service health and per-meter power and energy, parsed by parse-prometheus-text-format, agree with the API', async () => {
    for (let i = 0; i < 3; i += 1) await server.request('GET', '/api/health');
    const response = await scrape();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    const parsed = parsePrometheusTextFormat(await response.text()) as Parsed;
    const family = (name: string) => parsed.find((f) => f.name === name)!;
    for (const name of [
      'ems_up',
      'ems_collector_lag_seconds',
      'ems_gateway_up',
      'ems_backup_age_seconds',
      'ems_http_requests_total',
      'ems_meter_power_kw',
      'ems_meter_energy_kwh_total',
    ]) {
      assert.ok(family(name), `${name} present`);
    }
    assert.equal(family('ems_http_requests_total').type, 'COUNTER');
    const health = family('ems_http_requests_total').metrics.find((m) => m.labels?.method === 'GET' && m.labels?.code === '2xx');
    assert.ok(Number(health!.value) >= 3, 'the health calls were counted');
    assert.equal(family('ems_collector_lag_seconds').metrics[0].value, 'NaN', 'collection is off in tests: never collected');
    const power = family('ems_meter_power_kw').metrics;
    assert.deepEqual(
      power.map((m) => [m.labels?.meter_id, Number(m.value)]),
      [[String(seeded.meterIds[0]), 42.5]],
    );
    // Each meter's energy counter equals the series API's monthly sum over everything stored.
    const token = admin.accessToken;
    const energy = family('ems_meter_energy_kwh_total').metrics;
    assert.equal(energy.length, 1 + seeded.meterIds.length);
    for (const id of seeded.meterIds) {
      const sample = energy.find((m) => m.labels?.meter_id === String(id))!;
      assert.equal(sample.labels!.area, seeded.areas[seeded.meterIds.indexOf(id)]);
      const from = `${addDays(seeded.lastMonth.from, -3).slice(0, 7)}-01`;
      const to = addDays(new Date().toISOString().slice(0, 10), 1);
      const months = (await server.request('GET', `/api/energy/series?meterId=${id}&from=${from}&to=${to}&resolution=month`, { token })).body.points;
      const total = months.reduce((sum: number, p: { kwh: number }) => sum + p.kwh, 0);
      assert.ok(Math.abs(Number(sample.value) - total) < 0.01, `meter ${id}: ${sample.value} vs ${total}`);
    }
  });

  test('every started job is listed by name with its runs, last start and next run; the jobs that are off are not', async () => {
    const parsed = parsePrometheusTextFormat(await (await scrape()).text()) as Parsed;
    const family = (name: string) => parsed.find((f) => f.name === name)!;
    const runs = new Map(family('ems_job_runs_total').metrics.map((m) => [m.labels!.job, Number(m.value)]));
    const listed = server.service.deps.jobs.list();
    assert.deepEqual([...runs.keys()].sort(), listed.map((job) => job.name).sort(), 'the metrics list the registry');
    // The test server runs without collection and the alarm poll (EMS_COLLECT_INTERVAL / EMS_ALARM_POLL_INTERVAL off).
    for (const name of ['WAL checkpoint', 'gateway probe', 'alert escalations', 'verification code sweep', 'backup', 'report plans', 'load shedding guard'])
      assert.ok(runs.has(name), `${name} listed`);
    for (const name of ['energy collection', 'gateway alarm poll', 'energy anomaly check']) assert.ok(!runs.has(name), `${name} is off`);
    // A Repeating runs at once when started: the sweep and the WAL check have started by the time the server answers.
    const started = new Map(family('ems_job_last_start_timestamp_seconds').metrics.map((m) => [m.labels!.job, Number(m.value)]));
    assert.ok(runs.get('verification code sweep')! >= 1 && started.get('verification code sweep')! * 1000 <= Date.now());
    const next = new Map(family('ems_job_next_run_timestamp_seconds').metrics.map((m) => [m.labels!.job, m.value]));
    assert.ok(Number(next.get('backup')) * 1000 > Date.now(), 'the nightly backup is due in the future');
    const owner = family('ems_job_runs_total').metrics.find((m) => m.labels!.job === 'backup')!.labels!.owner;
    assert.equal(owner, 'operations');
  });

  test('OpenMetrics when asked: counters typed without _total, units, and # EOF last', async () => {
    const response = await scrape({ accept: 'application/openmetrics-text; version=1.0.0' });
    assert.match(response.headers.get('content-type')!, /^application\/openmetrics-text; version=1\.0\.0/);
    const text = await response.text();
    assert.match(text, /^# TYPE ems_http_requests counter$/m);
    assert.match(text, /^ems_http_requests_total\{method="GET",code="2xx"\} \d+$/m);
    assert.match(text, /^# UNIT ems_backup_age_seconds seconds$/m);
    assert.ok(text.endsWith('# EOF\n'));
  });

  test('without the token, with a wrong one or with a user JWT: 401; a POST is 405', async () => {
    assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
    assert.equal((await scrape({ authorization: 'Bearer wrong-token-0123456789' })).status, 401);
    assert.equal((await scrape({ authorization: `Bearer ${admin.accessToken}` })).status, 401);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  test('60 scrapes in flight at once all answer 200 with the same meters', async () => {
    const responses = await Promise.all(Array.from({ length: 60 }, () => scrape()));
    const texts = await Promise.all(responses.map((r) => r.text()));
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([200]));
    const meters = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith('ems_meter_energy_kwh_total'))
        .join('\n');
    assert.equal(new Set(texts.map(meters)).size, 1);
  });

  test('no EMS_METRICS_TOKEN: /metrics does not exist (401 without a user token, 404 with one)', async () => {
    const plain = await startTestServer();
    try {
      const user = await plain.createUser({ role: 'admin' });
      assert.equal((await plain.request('GET', '/metrics')).status, 401);
      assert.equal((await plain.request('GET', '/metrics', { token: user.accessToken })).status, 404);
    } finally {
      await plain.close();
    }
  });

  test('a short EMS_METRICS_TOKEN stops the start with the variable named', async () => {
    await assert.rejects(startTestServer({ EMS_METRICS_TOKEN: 'short' }), /EMS_METRICS_TOKEN/);
  });
});
