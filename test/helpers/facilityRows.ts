// Inserts realistic rows straight into the facility tables (alerts, faults, maintenance, energy, uploads…) for read-side tests.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { getTableColumns, getTableName, is } from 'drizzle-orm';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as schema from '../../src/platform/db/schema/index.ts';

const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export type AlertSeed = {
  title?: string;
  message?: string;
  level?: 'info' | 'warning' | 'critical';
  status?: 'active' | 'acknowledged' | 'resolved';
  area?: string | null;
  occurredAt?: string;
  byUserId?: number | null;
};

export function insertAlert(sqlite: Database.Database, seed: AlertSeed = {}): number {
  const status = seed.status ?? 'active';
  const now = iso();
  const by = seed.byUserId ?? null;
  return Number(
    sqlite
      .prepare(
        `INSERT INTO alerts (title, message, level, source, area, status, occurred_at, acknowledged_at, acknowledged_by, resolved_at, resolved_by, created_at, updated_at)
         VALUES (?, ?, ?, 'PT-100', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        seed.title ?? 'Chiller pressure high',
        seed.message ?? 'Pressure above 8 bar',
        seed.level ?? 'warning',
        seed.area === undefined ? 'Plant room' : seed.area,
        status,
        seed.occurredAt ?? now,
        status === 'active' ? null : now,
        status === 'active' ? null : by,
        status === 'resolved' ? now : null,
        status === 'resolved' ? by : null,
        now,
        now,
      ).lastInsertRowid,
  );
}

export function insertFault(sqlite: Database.Database, status: 'open' | 'in_progress' | 'resolved' | 'closed' = 'open', assignee = 'Technician A'): number {
  const now = iso();
  return Number(
    sqlite
      .prepare(
        `INSERT INTO faults (device, code, description, severity, status, area, assignee, reported_at, resolved_at, created_at, updated_at)
         VALUES ('AHU-2', 'E42', 'Fan belt worn', 'high', ?, 'Roof', ?, ?, ?, ?, ?)`,
      )
      .run(status, assignee, now, status === 'resolved' || status === 'closed' ? now : null, now, now).lastInsertRowid,
  );
}

export function insertMaintenance(
  sqlite: Database.Database,
  status: 'planned' | 'in_progress' | 'done' | 'cancelled',
  scheduledInMs: number | null,
  faultId: number | null = null,
): number {
  const now = iso();
  return Number(
    sqlite
      .prepare(
        `INSERT INTO maintenance (equipment, type, description, status, scheduled_at, completed_at, assignee, cost, fault_id, created_at, updated_at)
         VALUES ('Boiler 1', 'preventive', 'Annual service', ?, ?, ?, 'Technician B', 120.5, ?, ?, ?)`,
      )
      .run(status, scheduledInMs === null ? null : iso(scheduledInMs), status === 'done' ? now : null, faultId, now, now).lastInsertRowid,
  );
}

/** An uploaded file or model row with its bytes on disk under <dataDir>/<uploads|models>. */
export function insertUpload(
  sqlite: Database.Database,
  dataDir: string,
  table: 'files' | 'model_files',
  uploadedBy: number | null,
): { id: number; storedName: string } {
  const storedName = `${table}-${process.hrtime.bigint()}.bin`;
  const bytes = Buffer.from('sample bytes\n');
  fs.writeFileSync(path.join(dataDir, table === 'files' ? 'uploads' : 'models', storedName), bytes);
  const id = Number(
    sqlite
      .prepare(
        `INSERT INTO ${table} (original_name, stored_name, mime_type, size, sha256, uploaded_by, created_at)
         VALUES ('sample.bin', ?, 'application/octet-stream', ?, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', ?, ?)`,
      )
      .run(storedName, bytes.length, uploadedBy, iso()).lastInsertRowid,
  );
  return { id, storedName };
}

export function insertEnergyDaily(sqlite: Database.Database, day: string, kwh: number, area = 'total'): void {
  sqlite.prepare('INSERT INTO energy_daily (day, area, kwh) VALUES (?, ?, ?) ON CONFLICT(day, area) DO UPDATE SET kwh = excluded.kwh').run(day, area, kwh);
}

/** One or more rows in every table the schema defines (besides users, which tests create through the API or createUser). */
export function seedEveryTable(sqlite: Database.Database, dataDir: string, userId: number): void {
  const faultId = insertFault(sqlite, 'open');
  insertFault(sqlite, 'resolved');
  insertAlert(sqlite, { status: 'acknowledged', byUserId: userId });
  insertAlert(sqlite, { status: 'active', level: 'critical' });
  insertMaintenance(sqlite, 'planned', 2 * DAY, faultId);
  insertMaintenance(sqlite, 'done', -DAY);
  const templateId = sqlite.prepare('SELECT id FROM report_templates ORDER BY id LIMIT 1').pluck().get() as number;
  sqlite
    .prepare(
      `INSERT INTO report_plans (name, template_id, cron, format, recipients, enabled, created_at, updated_at)
       VALUES ('Weekly energy', ?, '0 6 * * 1', 'csv', '["facility@example.test"]', 1, ?, ?)`,
    )
    .run(templateId, iso(), iso());
  // A finished run of that plan, with valid values (the generic fill's 'sample' would fail the run's response schema).
  sqlite
    .prepare(
      `INSERT INTO report_runs (plan_id, trigger, status, format, period_from, period_to, started_at, finished_at, duration_ms, size_bytes, mail_attempts, delivery, files)
       VALUES ((SELECT max(id) FROM report_plans), 'manual', 'ok', 'csv', '2026-01-01', '2026-02-01', ?, ?, 120, 512, 1, 'logged', '[]')`,
    )
    .run(iso(), iso());
  // An alarm point mapped to that area (issue 45 item 11), with a valid match (the generic fill's 'sample' is not one).
  sqlite.prepare(`INSERT INTO alarm_areas (code, match, area, created_at, updated_at) VALUES ('srv.', 'prefix', 'Hall A', ?, ?)`).run(iso(), iso());
  sqlite
    .prepare(`INSERT INTO energy_areas (name, today_kwh, month_kwh, year_kwh, power_kw, created_at, updated_at) VALUES ('Hall A', 12.5, 300, 4000, 8.2, ?, ?)`)
    .run(iso(), iso());
  insertEnergyDaily(sqlite, new Date().toISOString().slice(0, 10), 12.5);
  sqlite
    .prepare(`INSERT INTO dashboard_settings (user_id, layout, refresh_interval_sec, theme, updated_at) VALUES (?, '[{"id":"k","type":"kpi","x":0,"y":0,"w":4,"h":2}]', 15, 'dark', ?)
              ON CONFLICT(user_id) DO NOTHING`)
    .run(userId, iso());
  sqlite
    .prepare(`INSERT INTO audit_log (at, user_id, username, action, resource, resource_id) VALUES (?, ?, 'seed', 'create', 'sample', '1')`)
    .run(iso(), userId);
  sqlite.prepare(`INSERT OR IGNORE INTO oauth_links (user_id, provider, provider_user_id, created_at) VALUES (?, 'github', '4242', ?)`).run(userId, iso());
  sqlite.prepare(`INSERT OR REPLACE INTO login_throttle (key, failures, window_started_at) VALUES ('user:nobody', 1, ?)`).run(Date.now());
  // Alarm handling: a rule with its JSON lists, a note and a recorded send on the first alert.
  const rule = sqlite
    .prepare(`INSERT INTO notification_rules (name, levels, area, recipients, escalate_after_min, escalate_to, enabled, created_at, updated_at)
      VALUES ('Critical to the duty desk', '["critical"]', NULL, '["duty@example.test"]', 15, '["manager@example.test"]', 1, ?, ?) RETURNING id`)
    .pluck()
    .get(iso(), iso()) as number;
  const alertId = sqlite.prepare('SELECT min(id) FROM alerts').pluck().get() as number;
  sqlite
    .prepare(`INSERT INTO alert_notes (alert_id, kind, text, user_id, username, at) VALUES (?, 'comment', 'checked on site', ?, 'seed', ?)`)
    .run(alertId, userId, iso());
  sqlite
    .prepare(
      `INSERT INTO notification_sends (alert_id, rule_id, kind, recipient, status, error, alert_ids, at) VALUES (?, ?, 'alert', 'duty@example.test', 'delivered', NULL, '[]', ?)`,
    )
    .run(alertId, rule, iso());
  // Energy: a counter, a virtual meter on it, a day of intervals with its rollups, the collector's state.
  const meter = sqlite
    .prepare(
      `INSERT INTO meters (name, code, kind, area, site, terms, enabled, created_at, updated_at) VALUES ('Main', 'meter.main.kwh', 'energy', NULL, 1, '[]', 1, ?, ?) RETURNING id`,
    )
    .pluck()
    .get(iso(), iso()) as number;
  sqlite
    .prepare(
      `INSERT INTO meters (name, code, kind, area, site, terms, enabled, created_at, updated_at) VALUES ('Rest', NULL, 'virtual', 'Hall A', 0, ?, 1, ?, ?)`,
    )
    .run(JSON.stringify([{ meterId: meter, sign: 1 }]), iso(), iso());
  const kwh = Buffer.from(new Float32Array(96).fill(45).buffer);
  sqlite
    .prepare(
      `INSERT INTO meter_days (meter_id, day, kwh, flags, max_kw, total_kwh, cost, carbon_kg, peak_kw, peak_index) VALUES (?, ?, ?, ?, NULL, 4320, 1080, 1728, 180, 0)`,
    )
    .run(meter, iso().slice(0, 10), kwh, Buffer.alloc(96));
  sqlite
    .prepare(`INSERT INTO meter_months (meter_id, month, total_kwh, cost, carbon_kg, peak_kw, peak_at) VALUES (?, ?, 4320, 1080, 1728, 180, ?)`)
    .run(meter, iso().slice(0, 7), Date.now());
  sqlite.prepare('INSERT INTO meter_state (meter_id, last_at, last_value, demand_kw) VALUES (?, ?, 1000, 180)').run(meter, Date.now());
  // A day a clock step back dropped whole (clockStep.ts dropAfter), waiting for the fleet sync.
  sqlite.prepare('INSERT INTO meter_days_dropped (meter_id, day) VALUES (?, ?)').run(meter, '2020-01-01');
  // Billing (issue 42): a tenant on the main meter, a period with a draft run and its statement, a supplier bill, a budget, a measure.
  const tenant = sqlite
    .prepare(
      `INSERT INTO billing_tenants (name, kind, contact_email, floor_area_m2, created_at, updated_at) VALUES ('Shop', 'tenant', 'shop@example.test', 100, ?, ?) RETURNING id`,
    )
    .pluck()
    .get(iso(), iso()) as number;
  // The tenant's own tariff (issue 51: tariffs per tenant or meter).
  sqlite
    .prepare(`INSERT INTO billing_tariffs (tenant_id, commodity, valid_from, price, created_at) VALUES (?, 'electricity', '2026-01-01', 0.29, ?)`)
    .run(tenant, iso());
  sqlite
    .prepare(`INSERT INTO billing_allocations (meter_id, method, shares, landlord_value, updated_at) VALUES (?, 'percent', ?, 40, ?)`)
    .run(meter, JSON.stringify([{ tenantId: tenant, value: 60 }]), iso());
  sqlite
    .prepare(
      'INSERT INTO billing_settings (id, max_missing_percent, max_estimated_percent, supplier_bill_tolerance_percent, updated_at) VALUES (1, 0.5, 5, 2, ?)',
    )
    .run(iso());
  const period = sqlite
    .prepare(`INSERT INTO billing_periods (name, from_day, to_day, created_at) VALUES ('January', '2026-01-01', '2026-02-01', ?) RETURNING id`)
    .pluck()
    .get(iso()) as number;
  const bill = { energy: [], standing: [], demand: [], carbonKg: 0, totalCents: 0 };
  const summary = {
    currency: 'EUR',
    site: { ...bill, meters: [] },
    landlord: bill,
    quality: { intervals: 0, missing: 0, estimated: 0, missingPercent: 0, estimatedPercent: 0 },
    reconciliation: { siteTotalCents: 0, statementsCents: 0, landlordCents: 0 },
  };
  const run = sqlite
    .prepare(
      `INSERT INTO billing_runs (period_id, status, kind, corrects_run_id, computed_at, summary) VALUES (?, 'draft', 'initial', NULL, ?, ?) RETURNING id`,
    )
    .pluck()
    .get(period, iso(), JSON.stringify(summary)) as number;
  sqlite
    .prepare('INSERT INTO billing_statements (run_id, tenant_id, total_cents, content, difference) VALUES (?, ?, 0, ?, NULL)')
    .run(run, tenant, JSON.stringify({ ...bill, meters: [] }));
  sqlite
    .prepare(
      `INSERT INTO supplier_bills (meter_id, from_day, to_day, reference, bands, billed_kw, standing_charges, total, calorific_value, created_at, created_by)
       VALUES (?, '2026-01-01', '2026-02-01', 'INV-1', '{"base":4320}', 180, 31, 1200, NULL, ?, 'seed')`,
    )
    .run(meter, iso());
  sqlite
    .prepare(
      `INSERT INTO billing_budgets (year, utility, scope, target, quantity, amount, phasing, margin_percent, created_at, updated_at) VALUES (2026, 'electricity', 'site', '', 50000, 10000, 'last_year', 5, ?, ?)`,
    )
    .run(iso(), iso());
  sqlite
    .prepare(
      `INSERT INTO savings_measures (name, description, meter_id, area, target, installed_on, cost, baseline_from, baseline_to, temperature_code, heating_base_c, cooling_base_c, adjustments, created_at, updated_at)
       VALUES ('LED retrofit', '', ?, NULL, 'meter', '2026-01-15', 1000, '2025-10-01', '2026-01-01', 'temp.outdoor', 15.5, 21, '[]', ?, ?)`,
    )
    .run(meter, iso(), iso());
  insertUpload(sqlite, dataDir, 'files', userId);
  const model = insertUpload(sqlite, dataDir, 'model_files', userId);
  sqlite.prepare('UPDATE three_d_config SET model_file_id = ? WHERE id = 1').run(model.id);
  sqlite
    .prepare(`UPDATE iot_gateway_token SET token = 'gateway-token-sample', expires_at = ?, refreshed_at = ? WHERE id = 1`)
    .run(Date.now() + HOUR, Date.now());
  // Joined to a fleet (which is not asked: not_before is an hour away): the credential must stay in the database.
  sqlite
    .prepare(
      `INSERT OR REPLACE INTO fleet_link (id, fleet_url, site_id, credential, joined_at, cursor, not_before)
       VALUES (1, 'https://fleet.example.test', '00000000-0000-4000-8000-000000000001', 'ems_site_sampleCredentialNotToLeak0123456789abcdef', ?, 0, ?)`,
    )
    .run(iso(), Date.now() + HOUR);
  fillEmptyTables(sqlite);
}

/**
 * Each table's enum columns (drizzle's text({ enum: … })) and their values: SQLite does not check them, the code reading
 * the row does. A JSON column (text({ mode: 'json' })) gets an empty object: drizzle parses it on every read.
 */
function enumColumns(): Map<string, Map<string, readonly string[]>> {
  const tables = new Map<string, Map<string, readonly string[]>>();
  for (const table of Object.values(schema)) {
    if (!is(table, SQLiteTable)) continue;
    const columns = new Map<string, readonly string[]>();
    for (const column of Object.values(getTableColumns(table))) {
      const values = (column as { enumValues?: readonly string[] }).enumValues;
      if (values?.length) columns.set(column.name, values);
      else if ((column as { dataType?: string }).dataType === 'json') columns.set(column.name, ['{}']);
    }
    tables.set(getTableName(table), columns);
  }
  return tables;
}

/**
 * Any table added later that the seed above does not know gets one row from its column types, so it is walked too; an
 * enum column gets its first value (not a word the code reading it does not know).
 */
function fillEmptyTables(sqlite: Database.Database): void {
  const enums = enumColumns();
  const tables = sqlite
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'`)
    .pluck()
    .all() as string[];
  for (const table of tables) {
    if (sqlite.prepare(`SELECT count(*) FROM "${table}"`).pluck().get()) continue;
    const columns = sqlite.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; type: string; notnull: number; dflt_value: unknown; pk: number }[];
    const needed = columns.filter((c) => c.notnull && c.dflt_value === null && !(c.pk && c.type.toLowerCase() === 'integer'));
    const values = needed.map(
      (c) => enums.get(table)?.get(c.name)?.[0] ?? (/int|real|num/i.test(c.type) ? 1 : /_at$/.test(c.name) ? new Date().toISOString() : 'sample'),
    );
    try {
      sqlite
        .prepare(`INSERT INTO "${table}" (${needed.map((c) => `"${c.name}"`).join(', ') || 'rowid'}) VALUES (${needed.map(() => '?').join(', ') || 'NULL'})`)
        .run(...values);
    } catch {
      // A constraint the generic values cannot meet (a foreign key, a CHECK): that table stays empty.
    }
  }
}
