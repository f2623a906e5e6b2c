// Energy metering: meters, what the collector last read from each, the compact interval store and dated tariffs.
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, updatedAt } from './columns.ts';

export const METER_KINDS = ['energy', 'power', 'virtual'] as const;
export const DEMAND_CHARGE_BASES = ['monthly_peak', 'rolling_12_month_average'] as const;
export type MeterKind = (typeof METER_KINDS)[number];
/** What a meter measures (issue 26): its unit follows (electricity kWh, gas m³, water m³, heat kWh thermal). */
export const COMMODITIES = ['electricity', 'gas', 'water', 'heat'] as const;
export type Commodity = (typeof COMMODITIES)[number];
/** An electricity meter's direction: what the site draws from the grid, what it feeds back, what its own panels make. */
export const METER_ROLES = ['import', 'export', 'generation'] as const;
export type MeterRole = (typeof METER_ROLES)[number];
/** A virtual meter's value per interval: the sum of its terms, each another meter's value times its sign. */
export type MeterTerm = { meterId: number; sign: 1 | -1 };

export const meters = sqliteTable(
  'meters',
  {
    id: id(),
    name: text('name').notNull(),
    /** The gateway point read; null for a virtual meter. */
    code: text('code'),
    kind: text('kind', { enum: METER_KINDS }).notNull(),
    /** The area its energy counts towards; null: site-level only (e.g. the main incomer). */
    area: text('area'),
    /** A site meter: the site's consumption is the sum of these (of the areas when there is none). */
    site: integer('site', { mode: 'boolean' }).notNull().default(false),
    terms: text('terms', { mode: 'json' }).$type<MeterTerm[]>().notNull().default([]),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    commodity: text('commodity', { enum: COMMODITIES }).notNull().default('electricity'),
    /** Electricity only; every other commodity is 'import' (drawn from its supply). */
    role: text('role', { enum: METER_ROLES }).notNull().default('import'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('meters_code_unique').on(t.code), uniqueIndex('meters_name_unique').on(t.name)],
);

/** The collector's position per meter: the last reading it counted (a restart continues from it, counting nothing twice). */
export const meterState = sqliteTable('meter_state', {
  meterId: integer('meter_id')
    .primaryKey()
    .references(() => meters.id, { onDelete: 'cascade' }),
  /** Epoch ms and value of the last reading counted. */
  lastAt: integer('last_at').notNull(),
  lastValue: real('last_value').notNull(),
  /** Current demand in kW: a power meter's last reading, an energy meter's mean over its last two readings. */
  demandKw: real('demand_kw'),
});

/**
 * One row per meter per site day: the day's 15-minute intervals (kWh to 0.1 Wh, delta-varint encoded; rows of the first
 * format: little-endian Float32, NaN = no data — see energy/intervalCodec.ts), the flags as runs (first format: a byte
 * per interval), a power meter's highest reading per interval, and the day's rollups (energy, cost, carbon, peak).
 * Keyed by day first: the rows one write touches (every meter's today) share a few pages.
 */
export const meterDays = sqliteTable(
  'meter_days',
  {
    meterId: integer('meter_id')
      .notNull()
      .references(() => meters.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    kwh: blob('kwh', { mode: 'buffer' }).notNull(),
    flags: blob('flags', { mode: 'buffer' }).notNull(),
    maxKw: blob('max_kw', { mode: 'buffer' }),
    totalKwh: real('total_kwh').notNull(),
    cost: real('cost').notNull(),
    carbonKg: real('carbon_kg').notNull(),
    /** The highest 15-minute mean demand of the day (kW) and its interval's index. */
    peakKw: real('peak_kw'),
    peakIndex: integer('peak_index'),
    /** Fleet sync: the sequence of this row's latest write, set by a trigger on every insert and change (fleet.ts). */
    syncSeq: integer('sync_seq').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.meterId] }), index('meter_days_meter_day').on(t.meterId, t.day), index('meter_days_sync_seq').on(t.syncSeq)],
);

/**
 * Meter days deleted whole by a clock step back (src/metering/clockStep.ts dropAfter), so that the fleet removes them too:
 * no day row is left to name their intervals as missing. The trigger meter_days_dropped_sync (migration 0043) stamps the
 * next sync sequence on each; a batch carries them as `deletedDays` (src/fleetSync/batch.ts). A day counted again later
 * is a new day row under a higher sequence, which wins at the fleet.
 */
export const meterDaysDropped = sqliteTable(
  'meter_days_dropped',
  {
    meterId: integer('meter_id').notNull(),
    day: text('day').notNull(),
    syncSeq: integer('sync_seq').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.meterId, t.day] }), index('meter_days_dropped_seq').on(t.syncSeq)],
);

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'holiday'] as const;
export type TariffBand = { name: string; days: (typeof WEEKDAYS)[number][]; from: string; to: string; price: number };

/** A tariff version applies from its first day until the next version's: adding one never changes a past cost. */
export const tariffVersions = sqliteTable(
  'tariff_versions',
  {
    id: id(),
    validFrom: text('valid_from').notNull(),
    /** Price per kWh outside every band. */
    price: real('price').notNull(),
    bands: text('bands', { mode: 'json' }).$type<TariffBand[]>().notNull().default([]),
    holidays: text('holidays', { mode: 'json' }).$type<string[]>().notNull().default([]),
    standingChargePerDay: real('standing_charge_per_day').notNull().default(0),
    carbonFactor: real('carbon_factor').notNull(),
    /** The demand the supply contract allows; a site 15-minute mean above it raises an alert. Null: no such rule. */
    contractedPeakKw: real('contracted_peak_kw'),
    /** Per kW of the billed demand each month (capacity tariff); 0: none. */
    demandChargePerKw: real('demand_charge_per_kw').notNull().default(0),
    /** What is billed: the month's highest 15-minute mean, or the rolling 12-month average of monthly peaks (Flanders). */
    demandChargeBasis: text('demand_charge_basis', { enum: DEMAND_CHARGE_BASES }).notNull().default('monthly_peak'),
    /** The billed demand is never below this (Flanders: 2.5 kW). */
    demandChargeMinimumKw: real('demand_charge_minimum_kw').notNull().default(0),
    note: text('note').notNull().default(''),
    /** Which supply it prices: electricity per kWh, gas per kWh (after conversion), water per m³, heat per kWh. */
    commodity: text('commodity', { enum: COMMODITIES }).notNull().default('electricity'),
    /** Electricity: paid per kWh exported to the grid. */
    feedInPrice: real('feed_in_price').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('tariff_versions_commodity_valid_from_unique').on(t.commodity, t.validFrom)],
);

/**
 * Month rollups per meter (site month 'YYYY-MM') of whole days only: the days before `meter_fold.open_from` (all days
 * when it has no row). Year and month cards read 12 rows, not 365; a month that holds open days (today) is read as its
 * row plus those day rows (metering's StoredDays).
 */
export const meterMonths = sqliteTable(
  'meter_months',
  {
    meterId: integer('meter_id')
      .notNull()
      .references(() => meters.id, { onDelete: 'cascade' }),
    month: text('month').notNull(),
    totalKwh: real('total_kwh').notNull(),
    cost: real('cost').notNull(),
    carbonKg: real('carbon_kg').notNull(),
    peakKw: real('peak_kw'),
    /** The peak's interval start, epoch ms. */
    peakAt: integer('peak_at'),
  },
  (t) => [primaryKey({ columns: [t.month, t.meterId] }), index('meter_months_meter_month').on(t.meterId, t.month)],
);

/**
 * Where the month rollups stop (migration 0025, issue 44): day rows on or after `open_from` (a site day, today once the
 * collector has written) are not in meter_months yet; the collector adds them once the day is done (the fold). No row:
 * every day is in its month (as before 0025). One row at most.
 */
export const meterFold = sqliteTable('meter_fold', {
  id: integer('id').primaryKey(),
  openFrom: text('open_from').notNull(),
});

/**
 * Runs of one repeated value (a flat zero: a dead meter or logger) on a meter whose recent history reads more (issue 52,
 * src/metering/suspectRuns.ts): their intervals read as `suspect` (FLAG_SUSPECT) until a person confirms the run as real
 * (`confirmed_at`: a closed building), then as measured. Found by the collector's watch and by the history import.
 */
export const meterSuspectRuns = sqliteTable(
  'meter_suspect_runs',
  {
    id: id(),
    meterId: integer('meter_id')
      .notNull()
      .references(() => meters.id, { onDelete: 'cascade' }),
    /** The first interval's start, epoch ms. */
    startAt: integer('start_at').notNull(),
    /** 15-minute intervals in the run (it grows while the collector sees it go on). */
    intervals: integer('intervals').notNull(),
    /** The repeated value (kWh, or m³ for gas and water meters). */
    value: real('value').notNull(),
    source: text('source', { enum: ['collector', 'import'] }).notNull(),
    confirmedAt: text('confirmed_at'),
    /** The user who confirmed it (no foreign key: the run outlives a deleted user, as the audit trail does). */
    confirmedBy: integer('confirmed_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('meter_suspect_runs_meter_start').on(t.meterId, t.startAt)],
);

// --- Energy management (issue 25): demand warnings, floor areas, EnPI drivers, outdoor temperature days ---------

/** A 15-minute window whose projected mean passed the contracted peak: when it warned and whether the window did pass it. */
export const peakWarnings = sqliteTable(
  'peak_warnings',
  {
    id: id(),
    windowStart: integer('window_start').notNull(),
    warnedAt: integer('warned_at').notNull(),
    projectedKw: real('projected_kw').notNull(),
    limitKw: real('limit_kw').notNull(),
    /** When the window's running energy passed the limit's (null: it never did; the warning was early enough or wrong). */
    crossedAt: integer('crossed_at'),
    /** The window's mean once it was over. */
    finalKw: real('final_kw'),
    alertKey: text('alert_key').notNull(),
  },
  (t) => [uniqueIndex('peak_warnings_window_unique').on(t.windowStart)],
);

/** An area's floor area, for kWh per m². */
export const areaFloorAreas = sqliteTable('area_floor_areas', {
  area: text('area').primaryKey(),
  floorAreaM2: real('floor_area_m2').notNull(),
  updatedAt: updatedAt(),
});

/** A monthly production or occupancy figure entered by hand (units produced, occupied desk-days): EnPI denominators. */
export const enpiDrivers = sqliteTable(
  'enpi_drivers',
  {
    name: text('name').notNull(),
    month: text('month').notNull(),
    value: real('value').notNull(),
    unit: text('unit').notNull().default(''),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.name, t.month] })],
);

/** An outdoor temperature point's hourly means per site day (Float32), read once from the gateway's history. */
export const outdoorDays = sqliteTable(
  'outdoor_days',
  {
    code: text('code').notNull(),
    day: text('day').notNull(),
    hourlyC: blob('hourly_c', { mode: 'buffer' }).notNull(),
    samples: integer('samples').notNull(),
  },
  (t) => [primaryKey({ columns: [t.code, t.day] })],
);

// --- Commodities (issue 26) ---------------------------------------------------------------------------------------

/** Gas volume to energy: kWh = m³ × kwhPerM3 × correctionFactor, by the version in force on the site day. */
export const calorificVersions = sqliteTable(
  'calorific_versions',
  {
    id: id(),
    validFrom: text('valid_from').notNull(),
    /** Calorific value (kWh per m³), as on the gas bill. */
    kwhPerM3: real('kwh_per_m3').notNull(),
    /** Volume correction to standard conditions (temperature, pressure). */
    correctionFactor: real('correction_factor').notNull().default(1),
    note: text('note').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('calorific_versions_valid_from_unique').on(t.validFrom)],
);

// --- Load shedding (issue 25): off by default, admin-only -----------------------------------------------------------

/** One row (id 1): whether load shedding runs, and its safety times. */
export const loadShedSettings = sqliteTable('load_shed_settings', {
  id: integer('id').primaryKey(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(false),
  /** A shed point stays shed at least this long (no short cycling of the equipment). */
  minOffSec: integer('min_off_sec').notNull().default(300),
  /** A shed point is restored after this long whatever the projection says. */
  maxShedSec: integer('max_shed_sec').notNull().default(1800),
});

/** A gateway point the load shedding writes: lowest priority number shed first, restored last. */
export const loadShedPoints = sqliteTable(
  'load_shed_points',
  {
    id: id(),
    code: text('code').notNull(),
    priority: integer('priority').notNull(),
    shedValue: real('shed_value').notNull(),
    restoreValue: real('restore_value').notNull(),
    /** When the shed value was written and read back (null: not shed). */
    shedAt: integer('shed_at'),
    /** The 15-minute window (start, epoch ms) it was shed in. */
    shedWindow: integer('shed_window'),
    /** Not shed again before this instant (after an unconfirmed write, or a restore forced by the maximum duration). */
    notBefore: integer('not_before'),
    lastError: text('last_error'),
    lastErrorAt: integer('last_error_at'),
  },
  (t) => [uniqueIndex('load_shed_points_code_unique').on(t.code)],
);
