// Services are built once when the service starts, each context by its module.ts in the order src/app/compose.ts
// lists; building the route table from them writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allRoutes } from '../../src/app/routes.ts';
import { startTestServer } from '../helpers/server.ts';

test('the route table is built from the started services without a database write', async () => {
  const server = await startTestServer();
  try {
    const { deps } = server.service;
    const changes = deps.db.sqlite.prepare('SELECT total_changes()').pluck();
    const fault = await server.createUser({ role: 'operator' });
    await server.request('POST', '/api/faults', { token: fault.accessToken, body: { device: 'pump', severity: 'low' } });
    const before = changes.get();
    const routes = allRoutes(deps);
    assert.ok(routes.length > 50);
    assert.equal(changes.get(), before, 'no write while the route table is built');
    // A route table built again serves the same service objects: a write through the API is seen by deps.faults.
    assert.equal(deps.faults.stats().total, 1);
  } finally {
    await server.close();
  }
});

/** What a route table may construct: an answer, an error, or a value of the language's own made for one request. */
const PER_REQUEST =
  /^(?:Reply|Error|[A-Z]\w*Error|AppError|HttpError|BadRequest|TokenExpired|Unauthorized|Forbidden|NotFound|Conflict|PayloadTooLarge|TooManyRequests|MethodNotAllowed|UnsupportedMediaType|BadGateway|GatewayTimeout|ServiceUnavailable|Date|Set|Map|URL|URLSearchParams|Promise|PassThrough|TextEncoder|TextDecoder|Uint8Array|Float64Array|Array|RegExp|Blob)$/;

test('services are built once, in the composition root: no route table constructs a service or a store', async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const src = path.resolve(import.meta.dirname, '../../src');
  const routeFiles = fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => /(^|\/)([a-zA-Z]*Routes|routes)\.ts$/.test(file));
  assert.ok(routeFiles.length >= 15, `found ${routeFiles.length} route files`);
  const offenders: string[] = [];
  for (const file of routeFiles) {
    const text = fs.readFileSync(path.join(src, file), 'utf8');
    // Any object a route table constructs is one the composition root should build once, except answers, errors and
    // the language's own values made per request.
    for (const match of text.matchAll(/new ([A-Z]\w*)\(|create\w*Store\(/g))
      if (!match[1] || !PER_REQUEST.test(match[1])) offenders.push(`${file}: ${match[0]}`);
  }
  assert.deepEqual(offenders, [], 'route tables receive their services from the modules (src/<context>/module.ts, started by src/app/compose.ts)');
});

test('the dashboard, the wallboard and the configs routes share one config store: a change shows on the next read of each', async () => {
  const server = await startTestServer();
  try {
    const admin = await server.createUser({ role: 'admin' });
    await server.request('GET', '/api/dashboard');
    await server.request('GET', '/api/wallboard');
    const renamed = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { siteName: 'Plant North' } });
    assert.equal(renamed.status, 200);
    assert.equal((await server.request('GET', '/api/dashboard')).body.platform.siteName, 'Plant North');
    assert.equal((await server.request('GET', '/api/wallboard')).body.platform.siteName, 'Plant North');
  } finally {
    await server.close();
  }
});

const SRC = new URL('../../src/', import.meta.url).pathname;

test('the composition root is a list of modules: it constructs nothing but its lifecycle and job registry', async () => {
  const fs = await import('node:fs');
  const text = fs.readFileSync(`${SRC}app/compose.ts`, 'utf8');
  const constructed = [...text.matchAll(/new ([A-Z]\w*)\(/g)].map((match) => match[1]);
  assert.deepEqual(
    constructed.filter((name) => !['Lifecycle', 'JobRegistry', 'StartupError', 'Promise'].includes(name!)),
    [],
    "a service is built by its context's module.ts",
  );
  // Every module is built from a face (src/<context>/index.ts) or the floor's module, never from a context's inner file.
  const built = [...text.matchAll(/\b(build[A-Z]\w*)\(/g)].map((match) => match[1]);
  assert.ok(built.length >= 15, `compose.ts builds ${built.length} modules`);
  for (const line of text.split('\n').filter((line) => line.startsWith('import ') && line.includes("from '../")))
    assert.match(line, /from '\.\.\/(\w+\/index|platform\/[\w/]+)\.ts'/, line);
});

/** Contexts with no module of their own, and who builds their pieces. */
const BUILT_BY_ANOTHER: Record<string, string> = { pricing: 'energy builds the tariffs and calorific values with the interval store (src/energy/module.ts)' };

test('every context the service builds has a module.ts whose build function its face exports', async () => {
  const fs = await import('node:fs');
  const contexts = fs
    .readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !['app', 'platform', 'web', 'fleet'].includes(entry.name))
    .map((entry) => entry.name);
  const missing: string[] = [];
  for (const context of contexts) {
    if (context in BUILT_BY_ANOTHER) continue;
    if (!fs.existsSync(`${SRC}${context}/module.ts`)) {
      missing.push(`${context}: no module.ts`);
      continue;
    }
    const module = fs.readFileSync(`${SRC}${context}/module.ts`, 'utf8');
    const face = fs.readFileSync(`${SRC}${context}/index.ts`, 'utf8');
    const builders = [...module.matchAll(/export (?:async )?function (build[A-Z]\w*)/g)].map((match) => match[1]!);
    if (!builders.length) missing.push(`${context}: module.ts exports no build function`);
    for (const name of builders) if (!new RegExp(`\\b${name}\\b`).test(face)) missing.push(`${context}: index.ts does not export ${name}`);
  }
  assert.deepEqual(missing, []);
  assert.ok(contexts.length >= 12, `found ${contexts.length} contexts`);
});

test('modules start their jobs and register their close hooks in the order the service always had', async () => {
  const server = await startTestServer({ EMS_COLLECT_INTERVAL: '3600s', EMS_ALARM_POLL_INTERVAL: '3600s' });
  try {
    const { deps } = server.service;
    // The registry lists jobs as they were started; the lifecycle's hooks run in reverse of this list at close.
    assert.deepEqual(
      deps.jobs.list().map((job) => `${job.owner}:${job.name}`),
      [
        'platform:WAL checkpoint',
        'gateway:gateway probe',
        'reporting:report plans',
        'reporting:report plan wake-ups',
        'facility:alert escalations',
        'facility:gateway alarm poll',
        'analysis:load shedding guard',
        'metering:energy collection',
        'analysis:energy anomaly check',
        'billing:budget check',
        'fleet:fleet sync',
        'access:verification code sweep',
        'operations:backup',
        'operations:backup schedule reload',
      ],
    );
    // Load shedding closes after the collector stopped (it restores what the last collection shed) and before the
    // gateway client and the database; the WAL index after the database (its locks).
    assert.deepEqual(
      (Reflect.get(deps.lifecycle, 'hooks') as { name: string }[]).map((hook) => hook.name),
      [
        'service lock',
        'WAL index',
        'database',
        'WAL checkpoints',
        'mailer',
        'IoT gateway simulator',
        'IoT gateway client',
        'report worker',
        'report scheduler',
        'alert notifications',
        'gateway alarm poller',
        'load shedding (restores shed points)',
        'energy collector',
        'energy anomaly check',
        'budget check',
        'fleet sync',
        'code sweeper',
        'backup scheduler',
      ],
    );
  } finally {
    await server.close();
  }
});

/**
 * Where a class a module builds is also constructed elsewhere, and why it is not a second copy in the service: another
 * thread or process with its own connection, or a fallback only tests take. A new entry needs a reason as good.
 */
const OTHER_CONSTRUCTION_SITES: Record<string, string> = {
  'reporting/reports/reportWorker.ts AuditLog': 'the report worker thread, on its own read-only connection',
  'reporting/reports/reportWorker.ts Comparisons': 'the report worker thread, on its own read-only connection',
  'reporting/reports/reportWorker.ts DemandCharges': 'the report worker thread, on its own read-only connection',
  'operations/backup/schedule.ts AuditLog':
    "changeSchedule (the API and emsctl alike) records on the caller's connection; an AuditLog prepares one insert and keeps no state. next: take the audit log as an argument",
  'screens/overview/service.ts SiteEnergy': 'only when given bare figures (tests of the overview alone); the service hands it energy.site',
  'reporting/reports/energyFigures.ts SiteEnergy': 'the report tests and benchmark build their energy source without a service',
};

test('a long-lived object a module builds is constructed in no other file of the service', async () => {
  const fs = await import('node:fs');
  const files = fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('web/app/'));
  const modules = files.filter((file) => file.endsWith('module.ts'));
  const built = new Set(modules.flatMap((file) => [...fs.readFileSync(`${SRC}${file}`, 'utf8').matchAll(/new ([A-Z]\w*)\(/g)].map((match) => match[1]!)));
  // Repeating is the job primitive: each job owns its own.
  built.delete('Repeating');
  assert.ok(built.size >= 25, `modules build ${built.size} kinds of objects`);
  const elsewhere: string[] = [];
  for (const file of files.filter((file) => !file.endsWith('module.ts'))) {
    for (const match of fs.readFileSync(`${SRC}${file}`, 'utf8').matchAll(/new ([A-Z]\w*)\(/g))
      if (built.has(match[1]!) && !(`${file} ${match[1]}` in OTHER_CONSTRUCTION_SITES)) elsewhere.push(`${file}: new ${match[1]}(`);
  }
  assert.deepEqual(elsewhere, [], 'built once, by its context module (src/<context>/module.ts)');
});

test("metering's stored-day reader is built in one place, with the interval store, and handed to every reader", async () => {
  const fs = await import('node:fs');
  const files = fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('web/app/'));
  // Module files are scanned too: the general rule above lets two modules build the same class.
  const sites = files.filter((file) => /new StoredDays\(/.test(fs.readFileSync(`${SRC}${file}`, 'utf8')));
  // buildEnergy builds the store and its reader; the report worker calls buildEnergy on its own read-only connection.
  assert.deepEqual(sites, ['energy/module.ts']);
});
