// The fleet's PostgreSQL schema (drizzle pg dialect). Migrations: `npx drizzle-kit generate --config drizzle.fleet.config.ts`
// into src/fleet/migrations. `intervals` is partitioned by month on `start`, which drizzle-kit cannot say: its generated
// CREATE TABLE was edited by hand to add PARTITION BY RANGE (see the migration); partitions are made on demand (partitions.ts).
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const FLEET_ROLES = ['viewer', 'admin'] as const;
export type FleetRole = (typeof FLEET_ROLES)[number];

/** One row per enrolled site box. The credential is kept only as its SHA-256 (it is 32 random bytes, so no salt/bcrypt). */
export const sites = pgTable(
  'sites',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    timezone: text('timezone'),
    floorAreaM2: doublePrecision('floor_area_m2'),
    credentialHash: text('credential_hash').notNull(),
    enrolledAt: at('enrolled_at').notNull().defaultNow(),
    revokedAt: at('revoked_at'),
    lastContactAt: at('last_contact_at'),
    /**
     * The end (`through`) of the last batch stored for the site. A batch starting below it means the site's sequence
     * went backwards (restored from an older backup, or an answer the box never got) and is refused with this cursor.
     */
    siteCursor: bigint('site_cursor', { mode: 'number' }).notNull().default(0),
    /** The site's clock minus the fleet's at the last batch (ms): positive = the site is ahead. */
    clockSkewMs: integer('clock_skew_ms'),
    /** What the site said about itself in its last batch: version, collector, gateway, last backup, unsent rows. */
    health: jsonb('health').$type<SiteHealth>(),
    lastRefusal: text('last_refusal'),
    /** The newest interval start the fleet holds for the site: sync lag = now minus this. */
    latestIntervalAt: at('latest_interval_at'),
    /** How many meters the site declared (kept with each metadata write): completeness without counting site_meters. */
    meterCount: integer('meter_count').notNull().default(0),
    /** The name the box gives itself (its site settings); `name` is the name given at enrolment (migration 0002). */
    boxName: text('box_name'),
    /** The install id of the box that is this site: another box sending with the credential is refused (migration 0002). */
    installId: text('install_id'),
    /** The month whose 12 complete months before it `site_eui` holds for this site (migration 0004); null: none yet. */
    euiMonth: date('eui_month', { mode: 'string' }),
    /** All-fuels kWh (water left out) of the 12 complete months before `euiMonth`; null: no sums (migration 0006). */
    euiKwh: doublePrecision('eui_kwh'),
    /** The same of the 12 months before those; null when none of them has a figure. */
    euiKwhPrev: doublePrecision('eui_kwh_prev'),
    /** kWh/m²·a: what the EUI ranking ranks by (indexed in its order, `sites_eui_rank`). */
    eui: doublePrecision('eui').generatedAlwaysAs(sql`"eui_kwh" / NULLIF("floor_area_m2", 0)`),
    /** A site-clock alarm is open (kept with the alarm by the ingest): the health grade reads it here (migration 0006). */
    clockAlarm: boolean('clock_alarm').notNull().default(false),
    /** The last good backup the box reported (`health.lastBackupAt`), as a time the grade compares. */
    lastBackupAt: at('last_backup_at'),
    /** Yesterday's intervals were complete (`yday_ok`) as judged on the UTC day `yday_on`, at the site's last batch. */
    ydayOn: date('yday_on', { mode: 'string' }),
    ydayOk: boolean('yday_ok'),
  },
  (table) => [
    uniqueIndex('sites_credential_hash').on(table.credentialHash),
    index('sites_eui_rank').on(table.eui.desc().nullsLast(), table.name, table.id).where(sql`"revoked_at" is null`),
  ],
);

export type SiteHealth = {
  version?: string;
  collector?: string;
  gateway?: string;
  lastBackupAt?: string | null;
  unsentRows?: number;
  oldestUnsentAt?: string | null;
};

/** One-time enrolment codes (hashed); `usedAt` set in the transaction that creates the site. */
export const enrolmentCodes = pgTable('enrolment_codes', {
  codeHash: text('code_hash').primaryKey(),
  siteName: text('site_name').notNull(),
  createdAt: at('created_at').notNull().defaultNow(),
  expiresAt: at('expires_at').notNull(),
  usedAt: at('used_at'),
  siteId: uuid('site_id').references(() => sites.id),
});

export const siteAreas = pgTable(
  'site_areas',
  {
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    floorAreaM2: doublePrecision('floor_area_m2'),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.name] })],
);

/** The meters a site declared; rows for any other meter key are refused. `key` is the site's own meter id as text. */
export const siteMeters = pgTable(
  'site_meters',
  {
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    name: text('name').notNull(),
    commodity: text('commodity').notNull(),
    unit: text('unit').notNull(),
    area: text('area'),
    /** Counts toward the site's total (the site's main meters), as the site's own figures do. */
    siteTotal: integer('site_total').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.key] })],
);

/**
 * 15-minute intervals, partitioned by month on `start`. Upsert key (site, meter, start); `seq` is the site's sequence
 * of the row's latest version, so an older re-send never overwrites a newer restatement.
 */
export const intervals = pgTable(
  'intervals',
  {
    siteId: uuid('site_id').notNull(),
    meterKey: text('meter_key').notNull(),
    start: at('start').notNull(),
    value: doublePrecision('value').notNull(),
    quality: text('quality').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.meterKey, table.start] })],
);

/** Day rollups as the site computed them (its tariffs, its carbon factors). */
export const dayRollups = pgTable(
  'day_rollups',
  {
    siteId: uuid('site_id').notNull(),
    meterKey: text('meter_key').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    /** In the meter's unit (site_meters.unit): kWh, or m³ for gas and water. */
    value: doublePrecision('value').notNull(),
    /**
     * Gas only: the day's kWh by the calorific value × correction in force on the site that day (the site sends it);
     * null for other commodities and for gas from a box that predates it (that gas stays out of the EUI).
     */
    kwh: doublePrecision('kwh'),
    cost: doublePrecision('cost').notNull(),
    carbonKg: doublePrecision('carbon_kg').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.meterKey, table.day] }), index('day_rollups_day').on(table.day)],
);

/** Site alerts with their lifecycle; `alertId` is the site's own id. */
export const siteAlerts = pgTable(
  'site_alerts',
  {
    siteId: uuid('site_id').notNull(),
    alertId: bigint('alert_id', { mode: 'number' }).notNull(),
    title: text('title').notNull(),
    level: text('level').notNull(),
    status: text('status').notNull(),
    occurredAt: at('occurred_at').notNull(),
    acknowledgedAt: at('acknowledged_at'),
    resolvedAt: at('resolved_at'),
    seq: bigint('seq', { mode: 'number' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.siteId, table.alertId] }),
    // The open alerts across sites (the portfolio's alert list) and per site (its health row).
    index('site_alerts_open_time').on(table.occurredAt.desc(), table.siteId, table.alertId).where(sql`${table.status} <> 'resolved'`),
    index('site_alerts_open_by_site').on(table.siteId).where(sql`${table.status} <> 'resolved'`),
  ],
);

/** Interval rows whose start lay too far ahead of the fleet's clock: kept, never dropped, until an operator looks. */
export const quarantinedIntervals = pgTable(
  'quarantined_intervals',
  {
    siteId: uuid('site_id').notNull(),
    meterKey: text('meter_key').notNull(),
    start: at('start').notNull(),
    value: doublePrecision('value').notNull(),
    quality: text('quality').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    receivedAt: at('received_at').notNull().defaultNow(),
    siteSentAt: at('site_sent_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.meterKey, table.start] })],
);

/** Fleet-side alarms about a site (kind `site_clock`): one open alarm per site and kind. */
export const fleetAlarms = pgTable(
  'fleet_alarms',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    message: text('message').notNull(),
    raisedAt: at('raised_at').notNull().defaultNow(),
    clearedAt: at('cleared_at'),
  },
  (table) => [
    uniqueIndex('fleet_alarms_open').on(table.siteId, table.kind).where(sql`${table.clearedAt} is null`),
    index('fleet_alarms_open_time').on(table.raisedAt.desc()).where(sql`${table.clearedAt} is null`),
  ],
);

/** People who read the portfolio. A token is 32 random bytes, kept as its SHA-256. */
export const fleetUsers = pgTable('fleet_users', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  name: text('name').notNull().unique(),
  role: text('role', { enum: FLEET_ROLES }).notNull(),
  /** The printed token (`fleetctl user add`), the first admin's bootstrap; null for users who sign in otherwise. */
  tokenHash: text('token_hash').unique(),
  createdAt: at('created_at').notNull().defaultNow(),
  email: text('email'),
  /** bcrypt (cost 10, the box's). */
  passwordHash: text('password_hash'),
  /** The OIDC issuer's `sub` once the user signed in with it. */
  oidcSubject: text('oidc_subject'),
  /** An open invitation: its code's SHA-256 and when it lapses. */
  invitationHash: text('invitation_hash'),
  invitationExpiresAt: at('invitation_expires_at'),
});

/** Sessions made by a sign-in (password or single sign-on): the bearer token's SHA-256, 12 hours. */
export const fleetSessions = pgTable('fleet_sessions', {
  tokenHash: text('token_hash').primaryKey(),
  userId: bigint('user_id', { mode: 'number' })
    .notNull()
    .references(() => fleetUsers.id, { onDelete: 'cascade' }),
  expiresAt: at('expires_at').notNull(),
});

/** Failed password checks per account and per address in the current 15-minute window (the box's lockout rules). */
export const fleetLoginThrottle = pgTable('fleet_login_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  windowStartedAt: at('window_started_at').notNull(),
});

/** A single sign-on on its way: the state sent to the issuer, the PKCE verifier and nonce (10 minutes). */
export const fleetSsoRequests = pgTable('fleet_sso_requests', {
  state: text('state').primaryKey(),
  codeVerifier: text('code_verifier').notNull(),
  nonce: text('nonce').notNull(),
  createdAt: at('created_at').notNull().defaultNow(),
});

/** Interval rows stored per site and UTC day (counted when first inserted): completeness without scanning intervals. */
export const siteDayCounts = pgTable(
  'site_day_counts',
  {
    siteId: uuid('site_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    rows: integer('rows').notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.day] }), index('site_day_counts_day').on(table.day)],
);

/**
 * Monthly totals per site and commodity over the site's total meters, in kWh: meters metered in kWh by their value, gas
 * in m³ by the kWh the site sent with each day (water, in m³ with no kWh, is never here), recomputed from day_rollups
 * for each month a batch touched: the EUI ranking reads 24 rows per site and commodity instead of 730 days per meter.
 */
export const siteMonths = pgTable(
  'site_months',
  {
    siteId: uuid('site_id').notNull(),
    commodity: text('commodity').notNull(),
    month: date('month', { mode: 'string' }).notNull(),
    value: doublePrecision('value').notNull(),
    cost: doublePrecision('cost').notNull(),
    carbonKg: doublePrecision('carbon_kg').notNull(),
    days: integer('days').notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.commodity, table.month] })],
);

/** A user with rows here sees only these sites; a user without any sees every site. */
export const fleetUserSites = pgTable(
  'fleet_user_sites',
  {
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => fleetUsers.id, { onDelete: 'cascade' }),
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
  },
  (table) => [primaryKey({ columns: [table.userId, table.siteId] })],
);

/** The site administration's audit trail (src/fleet/siteAdmin.ts): who did what to a site, when, and why. */
export const siteAudit = pgTable(
  'site_audit',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    at: at('at').notNull().defaultNow(),
    userName: text('user_name').notNull(),
    action: text('action').notNull(),
    reason: text('reason'),
    detail: jsonb('detail').notNull().default({}),
  },
  (table) => [index('site_audit_site_at').on(table.siteId, table.id)],
);

/**
 * A site's EUI sums per commodity (migration 0004): `cur` the last 12 complete months before `sites.eui_month`, `prev`
 * the 12 before them (null: no month there). Kept by the ingest whenever it writes a complete month's totals or meets
 * a site whose `eui_month` is not the fleet's current month; the ranking reads these rows, not site_months.
 */
export const siteEui = pgTable(
  'site_eui',
  {
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    commodity: text('commodity').notNull(),
    cur: doublePrecision('cur').notNull(),
    prev: doublePrecision('prev'),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.commodity] })],
);

/**
 * A site's alert acknowledged from the portfolio (migration 0005), waiting for its box: the ingest answer carries it
 * (`acknowledgeAlerts`) while the fleet holds the alert as active; the box's own acknowledgement, in its next batch,
 * ends it (src/fleet/alertAcks.ts).
 */
export const alertAckRequests = pgTable(
  'alert_ack_requests',
  {
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    alertId: bigint('alert_id', { mode: 'number' }).notNull(),
    /** The alert's time when it was asked about: a re-used id (a box re-uses a deleted alert's) is another alert. */
    alertOccurredAt: at('alert_occurred_at').notNull(),
    userName: text('user_name').notNull(),
    requestedAt: at('requested_at').notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.alertId] })],
);

/**
 * The one row of retention (migration 0005): `raw_from`, the first month whose raw intervals are kept (null: all). Only
 * moves forward (src/fleet/retention.ts); the ingest stores no interval before it and makes no partition for it.
 */
export const fleetRetention = pgTable('fleet_retention', {
  id: integer('id').primaryKey(),
  rawFrom: date('raw_from', { mode: 'string' }),
});
