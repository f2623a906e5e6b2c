// The fuzzer's stateful part (issue 56 item 5): before each round, create through the API (as an admin) what the
// operations behind an id need — meters with two days of readings, tenants with shares and their own tariff, two billing
// periods with a run each (one issued, so it has statements; one left draft for the issue operation), a supplier bill,
// a budget, a measure, an alert, a fault, a maintenance record, a notification rule, a report plan with a finished run and
// its files, a file, a 3D model, a backup, a calorific value, an FDD point and equipment. Two records no API creates are
// written the way the service's own jobs write them: a suspect run (the collector's watch) and an FDD episode (the
// detector). Then `pathValue` names a live record for every `{id}` of the route table, so the valid pass reaches the
// handlers rather than their 404.
import { fileBody } from '../helpers/uploads.ts';
import { patience, type TestServer } from '../helpers/server.ts';
import { OUTDOOR_TEMPERATURE_CODE } from '../../src/analysis/weather.ts';

type Role = 'anonymous' | 'viewer' | 'operator' | 'admin';

export type SeedUsers = Record<Exclude<Role, 'anonymous'>, { id: number; token: string }>;

export type State = {
  round: number;
  /** Requests the seeding sent. */
  requests: number;
  /** A live record per collection path ("/api/alerts" → an alert's id). */
  ids: Map<string, number | string>;
  /** Seeded steps that did not succeed (a fuzzed earlier round may have changed a setting they need): named, not fatal. */
  problems: string[];
  /** The value for one path parameter of a valid-id request, or undefined when the state has none for it. */
  pathValue(method: string, path: string, name: string, role: Role): string | undefined;
  /** A valid value for a query parameter that names seeded data (a meter, a period with readings), if any. */
  queryValue(name: string): string | undefined;
  /** A request body rewritten to name the seeded records (the documented examples name ids 1, 2 and 3). */
  fixBody(path: string, body: unknown): unknown;
  /** A valid multipart upload for the operation, if it takes one. */
  upload(path: string): { body: Buffer; contentType: string } | undefined;
};

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
const GLB = Buffer.concat([Buffer.from('glTF'), Buffer.alloc(200, 1)]);

/** The measure's baseline and reporting days: in the past (a baseline reads only days before today), 45 + 15 days. */
const BASELINE_FROM = '2025-09-01';
const INSTALLED_ON = '2025-10-16';
const REPORT_TO = '2025-10-31';

function day(base: string, plus: number): string {
  return new Date(Date.parse(`${base}T00:00:00Z`) + plus * 86_400_000).toISOString().slice(0, 10);
}

/** Round r works on its own four days (and year), so records of earlier rounds never collide with its own. */
export async function seedState(
  server: TestServer,
  users: SeedUsers,
  round: number,
  sacrificial: () => Promise<number>,
  /** What one round leaves the next: the site meter (a site has one; a second over the same supply is a 409). */
  carry: { mainId?: number },
): Promise<State> {
  const admin = users.admin.token;
  const problems: string[] = [];
  const ids = new Map<string, number | string>();
  const tag = `r${round}`;
  const first = day('2030-01-01', round * 4);

  let requests = 0;
  const call = async (method: string, path: string, body?: unknown, raw?: { body: Buffer; contentType: string }): Promise<any> => {
    requests += 1;
    const answer = await server.request(method, path, {
      token: admin,
      body,
      raw: raw?.body,
      headers: raw ? { 'content-type': raw.contentType } : undefined,
    });
    if (answer.status >= 300) {
      problems.push(`${method} ${path} → ${answer.status} ${answer.text.slice(0, 200)}`);
      return undefined;
    }
    return answer.body;
  };
  const keep = (collection: string, record: any, field = 'id') => {
    if (record && record[field] !== undefined) ids.set(collection, record[field]);
    return record;
  };

  // Meters and two days of readings on each (stored as the collector stores them).
  const kept = carry.mainId === undefined ? undefined : await server.request('GET', `/api/meters/${carry.mainId}`, { token: admin });
  const main =
    kept?.status === 200 && kept.body.site
      ? kept.body
      : await call('POST', '/api/meters', { name: `Main ${tag}`, code: `fuzz.main.${tag}`, kind: 'energy', site: true });
  carry.mainId = main?.id;
  const unit = keep('/api/meters', await call('POST', '/api/meters', { name: `Unit ${tag}`, code: `fuzz.unit.${tag}`, kind: 'energy', area: 'Tenants' }));
  // A third meter only the valid pass's DELETE removes (deleting the unit would take its allocation and measure along).
  keep('/api/meters', await call('POST', '/api/meters', { name: `Spare ${tag}`, code: `fuzz.spare.${tag}`, kind: 'energy' }));
  // A history import job (its status and cancel routes): four intervals of the spare meter, replacing what is there.
  const importCsv = [
    'meter,start,kwh',
    ...[0, 1, 2, 3].map((i) => `fuzz.spare.${tag},${new Date(Date.parse(`${day('2021-03-01', round)}T00:00:00Z`) + i * 900_000).toISOString()},1.5`),
  ];
  keep(
    '/api/energy/import/jobs',
    await call('POST', '/api/energy/import/jobs?replace=true', undefined, { body: Buffer.from(`${importCsv.join('\n')}\n`), contentType: 'text/csv' }),
  );
  if (main && unit) {
    const { store } = server.service.deps.energy;
    const records = [0, 1, 2, 3].flatMap((plus) =>
      [
        [main.id, 50],
        [unit.id, 40],
      ].map(([id, value]) => {
        const record = store.load(id as number, day(first, plus));
        record.kwh.fill(value as number);
        return record;
      }),
    );
    // The measure's days: a load that follows the outdoor temperature (kept as the analysis keeps it), so the
    // baseline regresses on something; 20 % less from the day it is installed.
    const insertOutdoor = server.service.deps.db.sqlite.prepare(
      'INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES (?, ?, ?, 24) ON CONFLICT (code, day) DO NOTHING',
    );
    for (let d = 0, current = BASELINE_FROM; current < REPORT_TO; d += 1, current = day(BASELINE_FROM, d)) {
      const hourly = Float32Array.from({ length: 24 }, (_, hour) => 12 - d * 0.2 + 4 * Math.sin(((hour - 9) / 24) * 2 * Math.PI) + ((d * 7) % 5));
      insertOutdoor.run(OUTDOOR_TEMPERATURE_CODE, current, Buffer.from(hourly.buffer));
      const record = store.load(unit.id, current);
      const factor = current >= INSTALLED_ON ? 0.8 : 1;
      record.kwh.forEach((_, i) => {
        record.kwh[i] = factor * (8 + Math.max(0, 15.5 - hourly[Math.floor(i / 4)]!) * 0.6 + ((i * 13 + d * 5) % 7) * 0.1);
      });
      records.push(record);
    }
    store.transaction(() => store.save(records));
    ids.set('/api/billing/allocations', unit.id);
    // A flat zero the collector's watch would have recorded: the suspect run a person confirms.
    const suspect = server.service.deps.db.sqlite
      .prepare(
        `INSERT INTO meter_suspect_runs (meter_id, start_at, intervals, value, source, created_at, updated_at)
         VALUES (?, ?, 20, 0, 'collector', ?, ?) RETURNING id`,
      )
      .get(unit.id, Date.parse(`${first}T00:00:00Z`), new Date().toISOString(), new Date().toISOString()) as { id: number };
    ids.set('/api/energy/suspect-runs', suspect.id);
  }
  keep('/api/energy/tariffs', await call('POST', '/api/energy/tariffs', { validFrom: first, price: 0.3, carbonFactor: 0.4, standingChargePerDay: 2 }));
  keep(
    '/api/energy/calorific-values',
    await call('POST', '/api/energy/calorific-values', { validFrom: day('2099-01-01', round), kwhPerM3: 11.1, correctionFactor: 1.02264 }),
  );

  // Billing: two tenants sharing the unit, a tenant tariff, an issued run with statements and a draft run.
  const tenantA = keep('/api/billing/tenants', await call('POST', '/api/billing/tenants', { name: `Tenant A ${tag}`, floorAreaM2: 80 }));
  const tenantB = await call('POST', '/api/billing/tenants', { name: `Tenant B ${tag}`, floorAreaM2: 40 });
  if (unit && tenantA && tenantB)
    await call('PUT', `/api/billing/allocations/${unit.id}`, {
      method: 'percent',
      shares: [
        { tenantId: tenantA.id, value: 60 },
        { tenantId: tenantB.id, value: 30 },
      ],
      landlordValue: 10,
    });
  if (tenantA) keep('/api/billing/tariffs', await call('POST', '/api/billing/tariffs', { tenantId: tenantA.id, validFrom: first, price: 0.25 }));
  // The issue rules as a site with complete data has them (a fuzzed round may have tightened them; a meter a fuzzed
  // round put under a tenant has no readings in this round's days).
  await call('PUT', '/api/billing/settings', { maxMissingPercent: 100, maxEstimatedPercent: 100, supplierBillTolerancePercent: 2 });
  const issuedPeriod = await call('POST', '/api/billing/periods', { name: `Fuzz ${tag} a`, from: first, to: day(first, 2) });
  const draftPeriod = keep(
    '/api/billing/periods',
    await call('POST', '/api/billing/periods', { name: `Fuzz ${tag} b`, from: day(first, 2), to: day(first, 4) }),
  );
  let draftRunId: number | undefined;
  if (issuedPeriod) {
    const run = await call('POST', `/api/billing/periods/${issuedPeriod.id}/runs`);
    const issued = run ? await call('POST', `/api/billing/runs/${run.id}/issue`) : undefined;
    keep('/api/billing/runs', issued);
    if (issued?.statements?.[0]) ids.set('/api/billing/statements', issued.statements[0].id);
    else if (issued) problems.push(`run ${issued.id} issued without statements`);
  }
  if (draftPeriod) draftRunId = (await call('POST', `/api/billing/periods/${draftPeriod.id}/runs`))?.id;
  if (main)
    keep(
      '/api/billing/supplier-bills',
      (
        await call('POST', '/api/billing/supplier-bills', {
          meterId: main.id,
          from: first,
          to: day(first, 2),
          reference: `INV-FUZZ-${tag}`,
          total: 60,
          lines: [
            { kind: 'energy', quantity: 200, rate: 0.25, amount: 50 },
            { kind: 'standing', quantity: 2, rate: 5, amount: 10 },
          ],
        })
      )?.bill,
    );
  keep(
    '/api/billing/budgets',
    await call('POST', '/api/billing/budgets', {
      year: 2030 + round,
      utility: 'electricity',
      scope: 'site',
      unit: 'kWh',
      quantity: 1_200_000,
      amount: 240_000,
    }),
  );
  if (unit)
    keep(
      '/api/billing/measures',
      await call('POST', '/api/billing/measures', {
        name: `Measure ${tag}`,
        meterId: unit.id,
        installedOn: INSTALLED_ON,
        cost: 1000,
        baselineFrom: BASELINE_FROM,
        baselineTo: INSTALLED_ON,
      }),
    );

  // Facility: an alert, a fault, a maintenance record, a notification rule.
  keep(
    '/api/alerts',
    await call('POST', '/api/alerts', { title: `Fuzz alert ${tag}`, message: 'seeded', level: 'warning', source: 'fuzz', area: 'Plant room' }),
  );
  const fault = keep('/api/faults', await call('POST', '/api/faults', { device: 'AHU-3', code: 'E42', description: `Fuzz fault ${tag}`, severity: 'medium' }));
  keep(
    '/api/maintenance',
    await call('POST', '/api/maintenance', { equipment: 'Chiller 2', type: 'preventive', description: `Fuzz ${tag}`, scheduledAt: '2030-12-01T08:00:00Z' }),
  );
  keep(
    '/api/notification-rules',
    await call('POST', '/api/notification-rules', { name: `Fuzz rule ${tag}`, levels: ['critical'], recipients: ['fuzz@example.test'], enabled: true }),
  );

  // Reporting: a plan and one finished run with its files.
  const plan = keep(
    '/api/reports/plans',
    await call('POST', '/api/reports/plans', { name: `Fuzz plan ${tag}`, templateId: 'weekly-energy', cron: '0 7 * * 1', recipients: ['fuzz@example.test'] }),
  );
  let runFile: string | undefined;
  if (plan) {
    const started = await call('POST', `/api/reports/plans/${plan.id}/run`);
    if (started) {
      ids.set('/api/reports/runs', started.id);
      const until = Date.now() + 60_000 * patience();
      for (let finished = started; ; ) {
        if (finished?.files?.length) {
          runFile = finished.files[0].name;
          break;
        }
        if (finished && !['queued', 'running'].includes(finished.status)) {
          problems.push(`report run ${started.id} ended ${finished.status} without files`);
          break;
        }
        if (Date.now() > until) {
          problems.push(`report run ${started.id} did not finish`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
        finished = await call('GET', `/api/reports/runs/${started.id}`);
      }
    }
  }

  // Files, a 3D model, avatars, a backup.
  keep('/api/files', await call('POST', '/api/files', undefined, fileBody(PNG, `fuzz-${tag}.png`, 'image/png')));
  keep('/api/models', await call('POST', '/api/models', undefined, fileBody(GLB, `fuzz-${tag}.glb`, 'model/gltf-binary')));
  for (const user of Object.values(users)) await call('PUT', `/api/users/${user.id}/avatar`, undefined, fileBody(PNG, 'me.png', 'image/png'));
  const backup = await call('POST', '/api/system/backups');
  if (backup?.name) ids.set('/api/system/backups', backup.name);
  else problems.push(`backup answered ${JSON.stringify(backup)}`);

  // Fault detection: a point on an equipment, the first shipped rule, and an episode of it as the detector records one.
  const code = `fuzz.ahu.sat.${tag}`;
  if (await call('PUT', `/api/fdd/points/${code}`, { equipment: 'AHU-1', equipmentType: 'AHU', brickClass: 'Supply_Air_Temperature_Sensor', unit: '°C' }))
    ids.set('/api/fdd/points', code);
  ids.set('/api/fdd/equipment', 'AHU-1');
  const rules = await call('GET', '/api/fdd/rules');
  const rule = (Array.isArray(rules) ? rules : rules?.items)?.[0];
  if (rule) {
    ids.set('/api/fdd/rules', rule.id);
    const now = new Date().toISOString();
    const episode = server.service.deps.db.sqlite
      .prepare(
        `INSERT INTO fdd_episodes (rule_id, rule_version, equipment, started_at, last_seen_at, evidence, method, fault_id)
         VALUES (?, ?, 'AHU-1', ?, ?, '{}', 'fuzz', ?) RETURNING id`,
      )
      .get(rule.id, rule.version ?? 1, now, now, fault?.id ?? null) as { id: number };
    ids.set('/api/fdd/episodes', episode.id);
  }

  // Each signed-in role is linked to the configured provider, so its own link can be read and removed.
  for (const user of Object.values(users))
    server.service.deps.db.sqlite
      .prepare(`INSERT OR IGNORE INTO oauth_links (user_id, provider, provider_user_id, created_at) VALUES (?, 'github', ?, ?)`)
      .run(user.id, `fuzz-${user.id}`, new Date().toISOString());

  const victims = [await sacrificial(), await sacrificial(), await sacrificial()];
  let victim = 0;

  return {
    round,
    requests,
    ids,
    problems,
    pathValue(method, path, name, role) {
      const prefix = path.split(`/{${name}}`)[0]!;
      if (name === 'provider') return 'github';
      if (prefix === '/api/users') {
        // Deleting, demoting or re-passwording one of the run's callers would end its later requests: a fresh user.
        const write = (method === 'DELETE' && path === '/api/users/{id}') || path.endsWith('/role') || path.endsWith('/password');
        if (write || role === 'anonymous') return String(victims[victim++ % victims.length]);
        return String(users[role].id);
      }
      if (path === '/api/billing/runs/{id}/issue' && draftRunId !== undefined) return String(draftRunId);
      if (path === '/api/reports/runs/{id}/files/{name}' && name === 'name') return runFile && encodeURIComponent(runFile);
      const value = ids.get(prefix);
      return value === undefined ? undefined : encodeURIComponent(String(value));
    },
    queryValue(name) {
      if (name === 'meterId' || name === 'meterIds') return unit && String(unit.id);
      if (name === 'from') return first;
      if (name === 'to') return day(first, 4);
      // The measure's days: a baseline with readings and outdoor temperatures.
      if (name === 'baselineFrom') return BASELINE_FROM;
      if (name === 'baselineTo') return INSTALLED_ON;
      return undefined;
    },
    fixBody(path, body) {
      if (!body || typeof body !== 'object') return body;
      const tenants = [ids.get('/api/billing/tenants'), tenantB?.id];
      const rewrite = (node: any): any => {
        if (Array.isArray(node)) return node.map(rewrite);
        if (!node || typeof node !== 'object') return node;
        const copy: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(node)) {
          if (key === 'tenantId' && typeof value === 'number') copy[key] = tenants[(value - 1) % 2] ?? value;
          else if (key === 'meterId' && typeof value === 'number') copy[key] = (path.includes('supplier-bills') ? main?.id : unit?.id) ?? value;
          else copy[key] = rewrite(value);
        }
        return copy;
      };
      const rewritten = rewrite(body);
      // A measure's and an adjustment's days: the seeded baseline and reporting period.
      if (path === '/api/billing/measures') Object.assign(rewritten, { installedOn: INSTALLED_ON, baselineFrom: BASELINE_FROM, baselineTo: INSTALLED_ON });
      // The example's issue rules (0.5 % missing) would refuse the draft run's issue later in the pass.
      if (path === '/api/billing/settings') Object.assign(rewritten, { maxMissingPercent: 100, maxEstimatedPercent: 100 });
      if (path === '/api/billing/measures/{id}/adjustments') Object.assign(rewritten, { from: INSTALLED_ON, to: REPORT_TO });
      return rewritten;
    },
    upload(path) {
      if (path === '/api/models') return fileBody(GLB, `valid-${tag}.glb`, 'model/gltf-binary');
      if (path === '/api/files' || path.endsWith('/avatar')) return fileBody(PNG, `valid-${tag}.png`, 'image/png');
      return undefined;
    },
  };
}
