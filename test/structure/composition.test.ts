// Services are built once when the service starts, each context by its module.ts in the order src/app/compose.ts
// lists; each module returns its route tables, published in the one order of ROUTE_ORDER; building them writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { orderRoutes, ROUTE_ORDER, routeTables } from '../../src/app/routes.ts';
import { tableOnlyRoutes } from '../../src/app/webApiTypes.ts';
import { defineRoute, type AnyRoute } from '../../src/platform/http/route.ts';
import { startTestServer } from '../helpers/server.ts';

const signature = (routes: AnyRoute[]) => routes.map((route) => `${route.method} ${route.path}`);

test('the modules return the route table the API document lists, in its order; building it again writes nothing', async () => {
  const server = await startTestServer();
  try {
    const { deps, routes } = server.service;
    // What the service serves is what `npm run web:api` and /documentation/json publish, route for route, in order.
    assert.ok(routes.length > 50);
    assert.deepEqual(signature(routes), signature(tableOnlyRoutes()));
    const changes = deps.db.sqlite.prepare('SELECT total_changes()').pluck();
    const fault = await server.createUser({ role: 'operator' });
    await server.request('POST', '/api/faults', { token: fault.accessToken, body: { device: 'pump', severity: 'low' } });
    const before = changes.get();
    const again = routeTables(deps);
    assert.equal(changes.get(), before, 'no write while the route table is built');
    assert.deepEqual(signature(again), signature(routes));
    // The route tables hold the modules' service objects: a write through the API is seen by deps.faults.
    assert.equal(deps.faults.stats().total, 1);
  } finally {
    await server.close();
  }
});

test('ROUTE_ORDER names every route table once; a table given twice, unlisted or missing is refused', () => {
  assert.equal(new Set(ROUTE_ORDER).size, ROUTE_ORDER.length, 'a key listed twice');
  const table = (path: string): AnyRoute[] => [
    defineRoute({ method: 'GET', path, access: 'public', summary: path, description: path, tags: [], schemas: { response: {} }, handler: () => ({}) }),
  ];
  const every = Object.fromEntries(ROUTE_ORDER.map((key) => [key, table(`/api/${key}`)]));
  const { health, iot, ...rest } = every;
  // Given in any order and split over any modules, the tables come out in ROUTE_ORDER.
  assert.deepEqual(
    signature(orderRoutes([{ iot: iot! }, rest, { health: health! }])),
    ROUTE_ORDER.map((key) => `GET /api/${key}`),
  );
  assert.throws(() => orderRoutes([every, { iot: table('/api/again') }]), /route table "iot" is given by two modules/);
  assert.throws(() => orderRoutes([every, { newThing: table('/api/new') }]), /route table "newThing" has no place in ROUTE_ORDER/);
  assert.throws(() => orderRoutes([rest]), /no module gives the route tables health, iot/);
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

test('every route table declares its needs by a named type in its own context', async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const src = path.resolve(import.meta.dirname, '../../src');
  const routeFiles = fs
    .readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => /(^|\/)([a-zA-Z]*Routes|routes)\.ts$/.test(file) && !file.startsWith('app/'));
  const tables: string[] = [];
  const unnamed: string[] = [];
  for (const file of routeFiles) {
    const text = fs.readFileSync(path.join(src, file), 'utf8');
    for (const match of text.matchAll(/export function (\w+Routes)\(([^)]*)\)/g)) {
      tables.push(match[1]!);
      // `({ alerts }: AlertRouteNeeds)` or `(needs: FileRouteNeeds)`, the type exported beside it; storedFileRoutes is a
      // helper the files tables share.
      const needs = /^(?:\{[^}]*\}|\w+): (\w+RouteNeeds)\b/.exec(match[2]!.trim())?.[1];
      if (match[1] === 'storedFileRoutes') continue;
      if (!needs || !new RegExp(`export type ${needs}\\b`).test(text)) unnamed.push(`${file}: ${match[1]}(${match[2]})`);
    }
  }
  assert.ok(tables.length >= 26, `found ${tables.length} route tables`);
  assert.deepEqual(unnamed, []);
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

/** Contexts with no module of their own, and who builds their pieces (none left: pricing has its module since issue 57). */
const BUILT_BY_ANOTHER: Record<string, string> = {};

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
        'faultDetection:fault rule evaluation',
        'screens:live events',
        'fleet:fleet sync',
        'access:verification code sweep',
        'operations:backup',
        'operations:backup schedule reload',
        'operations:storage alert',
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
        'fault rule evaluation',
        'live events',
        'fleet sync',
        'code sweeper',
        'backup scheduler',
        'storage alert',
      ],
    );
  } finally {
    await server.close();
  }
});

test('close hooks and jobs are registered in one place: startModule, from the running parts a module returns', async () => {
  const fs = await import('node:fs');
  const files = fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('web/app/'));
  const registering: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(`${SRC}${file}`, 'utf8');
    // A module that starts a part itself and registers its hook (startReports, startIotGateway did) hides it from
    // the order the test above pins; a module gets no Lifecycle and no JobRegistry to do it with.
    for (const match of text.matchAll(/\.onClose\(|\b(?:jobs|registry)\??\.add\(/g)) registering.push(`${file}: ${match[0]}`);
  }
  // startModule, and the service lock the composition root takes before any module (released last).
  assert.deepEqual(registering.sort(), ['app/compose.ts: .onClose(', 'platform/jobs/module.ts: .onClose(', 'platform/jobs/module.ts: registry.add(']);
  // A module is handed no Lifecycle (the operations module reads the JobRegistry for /metrics, and adds nothing to it).
  const handedLifecycle = files.filter((file) => file.endsWith('module.ts') && /\bLifecycle\b/.test(fs.readFileSync(`${SRC}${file}`, 'utf8')));
  assert.deepEqual(handedLifecycle, ['platform/jobs/module.ts'], 'a module returns its running parts; startModule registers them');
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

test('the modules construct each long-lived object at one place, never in a factory that builds one per caller', async () => {
  const fs = await import('node:fs');
  const modules = fs
    .readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('module.ts'))
    .map((file) => ({ file, text: fs.readFileSync(`${SRC}${file}`, 'utf8') }));
  const sites = new Map<string, string[]>();
  for (const { file, text } of modules) for (const match of text.matchAll(/new ([A-Z]\w*)\(/g)) sites.set(match[1]!, [...(sites.get(match[1]!) ?? []), file]);
  // Repeating is the job primitive: each job owns its own.
  sites.delete('Repeating');
  const twice = [...sites].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(', ')}`);
  assert.deepEqual(twice, [], 'one construction site per long-lived object (the analysis pieces once shared no outdoor temperatures)');
  // `baselines: (iot) => new Baselines(…)` built a second copy for every caller; the services are objects, built once.
  const factories = modules.flatMap(({ file, text }) => [...text.matchAll(/=>\s*new ([A-Z]\w*)\(/g)].map((match) => `${file}: ${match[0]}`));
  assert.deepEqual(factories, []);
  for (const name of ['OutdoorTemperatures', 'Baselines', 'HourlyBaselines', 'Enpis', 'AnomalyWatch', 'Measures', 'Metrics'])
    assert.equal(sites.get(name)?.length, 1, `${name} is built once, by a module`);
});

test('createApp builds no service: it is handed the routes and the metrics', async () => {
  const fs = await import('node:fs');
  const text = fs.readFileSync(`${SRC}app/app.ts`, 'utf8');
  const constructed = [...text.matchAll(/new ([A-Z]\w*)\(/g)].map((match) => match[1]);
  assert.deepEqual(
    constructed.filter((name) => !['Koa', 'Unauthorized', 'TokenExpired'].includes(name!)),
    [],
  );
});

test("metering's stored-day reader is built in one place, with the interval store, and handed to every reader", async () => {
  const fs = await import('node:fs');
  const files = fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('web/app/'));
  // Module files are scanned too: the general rule above lets two modules build the same class.
  const sites = files.filter((file) => /new StoredDays\(/.test(fs.readFileSync(`${SRC}${file}`, 'utf8')));
  // buildMeterStore builds the store and its reader; the report worker calls it (through buildEnergy) on its own read-only connection.
  assert.deepEqual(sites, ['metering/module.ts']);
});

test("a context's classes are constructed only in its own module.ts: no module builds another context's objects", async () => {
  const fs = await import('node:fs');
  const files = fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('web/app/'));
  const contextOf = (file: string) => file.slice(0, file.indexOf('/'));
  const owner = new Map<string, string>();
  for (const file of files)
    for (const match of fs.readFileSync(`${SRC}${file}`, 'utf8').matchAll(/^(?:export )?(?:abstract )?class (\w+)/gm)) owner.set(match[1]!, contextOf(file));
  assert.equal(owner.get('IntervalStore'), 'metering', 'the class map reads the declarations');
  const modules = files.filter((file) => file.endsWith('module.ts'));
  const foreign: string[] = [];
  let own = 0;
  for (const file of modules)
    for (const match of fs.readFileSync(`${SRC}${file}`, 'utf8').matchAll(/new ([A-Z]\w*)\(/g)) {
      const context = owner.get(match[1]!);
      // The floor's primitives (Repeating, AuditLog…) are every context's to build; a class of another context is not.
      if (context === contextOf(file)) own++;
      else if (context && context !== 'platform') foreign.push(`${file}: new ${match[1]}( (a class of ${context}/)`);
    }
  assert.ok(own >= 30, `modules build ${own} objects of their own context`);
  // energy's module once built metering's IntervalStore, StoredDays, MeterDirectory, HistoryImport and pricing's Tariffs (issue 57).
  assert.deepEqual(foreign, [], "each context's module.ts builds its own objects; another context's come through its build function");
});
