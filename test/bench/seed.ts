// Seeds a benchmark data dir with realistic rows (50 users, 10k alerts, 2k faults, 2k maintenance records, energy areas)
// straight through better-sqlite3 in one transaction, on a database opened with the shipped migrations.
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { hashPassword } from '../../src/access/auth/passwords.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { FaultService } from '../../src/facility/faults/service.ts';
import { prepareDataDir } from '../../src/app/compose.ts';

export const BENCH_PASSWORD = 'bench-password-1';
export const COUNTS = { users: 50, alerts: 10_000, faults: 2_000, maintenance: 2_000, energyAreas: 8 } as const;

export type SeedSummary = { viewer: string; operator: string; admin: string; loginUsers: string[]; counts: Record<string, number>; ms: number };

const AREAS = ['Lobby', 'Office North', 'Office South', 'Data Room', 'Kitchen', 'Workshop', 'Warehouse', 'Roof Plant'];
const DEVICES = ['AHU-1', 'AHU-2', 'Chiller-1', 'Chiller-2', 'Boiler-1', 'Pump-3', 'Meter-Main', 'UPS-1', 'Lift-A', 'FCU-12'];
const DAY_MS = 86_400_000;

/** A fixed-seed generator: every run seeds the same rows. */
function random(seed = 42): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export async function seedDataDir(dataDir: string): Promise<SeedSummary> {
  const started = performance.now();
  prepareDataDir(dataDir);
  const db = openDatabase(databasePath(dataDir));
  const rand = random();
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  const weighted = <T>(pairs: [T, number][]): T => {
    let r = rand();
    for (const [value, weight] of pairs) if ((r -= weight) < 0) return value;
    return pairs[pairs.length - 1][0];
  };
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  // One hash for everyone: 50 bcrypt rounds would add seconds and measure nothing.
  const passwordHash = await hashPassword(BENCH_PASSWORD);

  const sqlite = db.sqlite;
  const insertUser = sqlite.prepare(
    `INSERT INTO users (username, email, password_hash, role, display_name, phone, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertAlert = sqlite.prepare(
    `INSERT INTO alerts (title, message, level, source, area, status, occurred_at, acknowledged_at, acknowledged_by, resolved_at, resolved_by, created_at, updated_at)
     VALUES (@title, @message, @level, @source, @area, @status, @occurredAt, @acknowledgedAt, @acknowledgedBy, @resolvedAt, @resolvedBy, @occurredAt, @updatedAt)`,
  );
  const insertFault = sqlite.prepare(
    `INSERT INTO faults (device, code, description, severity, status, area, assignee, reported_at, resolved_at, created_at, updated_at)
     VALUES (@device, @code, @description, @severity, @status, @area, @assignee, @reportedAt, @resolvedAt, @reportedAt, @updatedAt)`,
  );
  const insertMaintenance = sqlite.prepare(
    `INSERT INTO maintenance (equipment, type, description, status, scheduled_at, completed_at, assignee, cost, fault_id, created_at, updated_at)
     VALUES (@equipment, @type, @description, @status, @scheduledAt, @completedAt, @assignee, @cost, @faultId, @createdAt, @updatedAt)`,
  );
  const insertArea = sqlite.prepare(
    `INSERT INTO energy_areas (name, today_kwh, month_kwh, year_kwh, power_kw, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertDaily = sqlite.prepare('INSERT OR REPLACE INTO energy_daily (day, area, kwh) VALUES (?, ?, ?)');

  const usernames: string[] = [];
  sqlite.transaction(() => {
    const roles = ['admin', 'operator', 'viewer'] as const;
    for (let i = 0; i < COUNTS.users; i++) {
      const username = i < 3 ? `bench-${roles[i]}` : `user${String(i + 1).padStart(2, '0')}`;
      const role =
        i < 3
          ? roles[i]
          : weighted<(typeof roles)[number]>([
              ['viewer', 0.7],
              ['operator', 0.25],
              ['admin', 0.05],
            ]);
      const created = iso(now - (400 - i) * DAY_MS);
      insertUser.run(username, `${username}@facility.example`, passwordHash, role, `Bench ${username}`, null, created, created);
      usernames.push(username);
    }

    for (let i = 0; i < COUNTS.alerts; i++) {
      // 90 days of history, oldest first so ids follow time as they do in production.
      const occurred = now - (COUNTS.alerts - i) * ((90 * DAY_MS) / COUNTS.alerts);
      const ageDays = (now - occurred) / DAY_MS;
      const status =
        ageDays > 7
          ? weighted<string>([
              ['resolved', 0.9],
              ['acknowledged', 0.07],
              ['active', 0.03],
            ])
          : weighted<string>([
              ['active', 0.5],
              ['acknowledged', 0.3],
              ['resolved', 0.2],
            ]);
      const level = weighted<string>([
        ['info', 0.6],
        ['warning', 0.3],
        ['critical', 0.1],
      ]);
      const device = pick(DEVICES);
      const acknowledged = status !== 'active' ? occurred + rand() * 3_600_000 : null;
      const resolved = status === 'resolved' ? (acknowledged ?? occurred) + rand() * 6 * 3_600_000 : null;
      insertAlert.run({
        title: `${device} ${pick(['high temperature', 'low pressure', 'comms lost', 'overcurrent', 'filter dirty', 'door open'])}`,
        message: `Reading outside its band on ${device}; check the unit and its sensors.`,
        level,
        source: `${device.toLowerCase()}.${pick(['temp', 'pressure', 'status', 'current'])}`,
        area: pick(AREAS),
        status,
        occurredAt: iso(occurred),
        acknowledgedAt: acknowledged === null ? null : iso(acknowledged),
        acknowledgedBy: acknowledged === null ? null : 2,
        resolvedAt: resolved === null ? null : iso(resolved),
        resolvedBy: resolved === null ? null : 2,
        updatedAt: iso(resolved ?? acknowledged ?? occurred),
      });
    }

    for (let i = 0; i < COUNTS.faults; i++) {
      const reported = now - (COUNTS.faults - i) * ((180 * DAY_MS) / COUNTS.faults);
      const status =
        (now - reported) / DAY_MS > 14
          ? weighted<string>([
              ['closed', 0.6],
              ['resolved', 0.3],
              ['in_progress', 0.05],
              ['open', 0.05],
            ])
          : weighted<string>([
              ['open', 0.4],
              ['in_progress', 0.4],
              ['resolved', 0.2],
            ]);
      const resolved = status === 'resolved' || status === 'closed' ? reported + rand() * 72 * 3_600_000 : null;
      insertFault.run({
        device: pick(DEVICES),
        code: `E${100 + Math.floor(rand() * 900)}`,
        description: 'Unit tripped; reset did not hold.',
        severity: weighted<string>([
          ['low', 0.4],
          ['medium', 0.35],
          ['high', 0.2],
          ['critical', 0.05],
        ]),
        status,
        area: pick(AREAS),
        assignee: pick(usernames),
        reportedAt: iso(reported),
        resolvedAt: resolved === null ? null : iso(resolved),
        updatedAt: iso(resolved ?? reported),
      });
    }

    for (let i = 0; i < COUNTS.maintenance; i++) {
      // A year back and a month ahead: some records are due, some overdue, most done.
      const scheduled = now - (COUNTS.maintenance - i) * ((365 * DAY_MS) / COUNTS.maintenance) + 30 * DAY_MS;
      const status =
        scheduled < now
          ? weighted<string>([
              ['done', 0.85],
              ['cancelled', 0.05],
              ['in_progress', 0.05],
              ['planned', 0.05],
            ])
          : 'planned';
      const completed = status === 'done' ? scheduled + rand() * 8 * 3_600_000 : null;
      const created = scheduled - 14 * DAY_MS;
      insertMaintenance.run({
        equipment: pick(DEVICES),
        type: weighted<string>([
          ['preventive', 0.6],
          ['corrective', 0.25],
          ['inspection', 0.15],
        ]),
        description: 'Scheduled service per the maintenance plan.',
        status,
        scheduledAt: iso(scheduled),
        completedAt: completed === null ? null : iso(completed),
        assignee: pick(usernames),
        cost: Math.round(rand() * 200_000) / 100,
        faultId: rand() < 0.2 ? 1 + Math.floor(rand() * COUNTS.faults) : null,
        createdAt: iso(created),
        updatedAt: iso(completed ?? created),
      });
    }

    const today = iso(now).slice(0, 10);
    AREAS.forEach((name) => {
      const todayKwh = 50 + rand() * 400;
      insertArea.run(name, todayKwh, todayKwh * 20, todayKwh * 250, 5 + rand() * 60, iso(now), iso(now));
    });
    for (let d = 0; d < 30; d++) {
      const day = iso(now - d * DAY_MS).slice(0, 10);
      insertDaily.run(day, 'total', 1500 + rand() * 800);
    }
    insertDaily.run(today, 'total', 1800);
  })();

  // The snapshot row must agree with the faults table, exactly as the service keeps it.
  const faultService = new FaultService(db, new AuditLog(db)) as FaultService & { recountStats?: () => unknown };
  if (typeof faultService.recountStats === 'function') faultService.recountStats();
  else recomputeFaultStats(sqlite);

  const counts = Object.fromEntries(
    ['users', 'alerts', 'faults', 'maintenance', 'energy_areas'].map((table) => [
      table,
      sqlite.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number,
    ]),
  );
  closeDatabase(db);
  return {
    admin: 'bench-admin',
    operator: 'bench-operator',
    viewer: 'bench-viewer',
    loginUsers: usernames.slice(3),
    counts,
    ms: Math.round(performance.now() - started),
  };
}

/** Fallback for a FaultService without recountStats(): the same aggregate, written to the snapshot row. */
function recomputeFaultStats(sqlite: ReturnType<typeof openDatabase>['sqlite']): void {
  const row = sqlite
    .prepare(
      `SELECT count(*) AS total, coalesce(sum(status = 'open'), 0) AS open, coalesce(sum(status = 'in_progress'), 0) AS inProgress,
         coalesce(sum(status = 'resolved'), 0) AS resolved, coalesce(sum(status = 'closed'), 0) AS closed,
         coalesce(sum(severity = 'low'), 0) AS low, coalesce(sum(severity = 'medium'), 0) AS medium,
         coalesce(sum(severity = 'high'), 0) AS high, coalesce(sum(severity = 'critical'), 0) AS critical,
         avg(CASE WHEN status IN ('resolved', 'closed') AND resolved_at IS NOT NULL
             THEN (julianday(resolved_at) - julianday(reported_at)) * 24 END) AS mttrHours
       FROM faults`,
    )
    .get() as Record<string, number | null>;
  sqlite
    .prepare(
      'UPDATE fault_stats SET total = ?, open = ?, in_progress = ?, resolved = ?, closed = ?, by_severity = ?, mttr_hours = ?, updated_at = ? WHERE id = 1',
    )
    .run(
      row.total,
      row.open,
      row.inProgress,
      row.resolved,
      row.closed,
      JSON.stringify({ low: row.low, medium: row.medium, high: row.high, critical: row.critical }),
      row.mttrHours,
      new Date().toISOString(),
    );
}
