// Fault detection (issue 54): points given an equipment and a Brick class, rules as versioned data, their switches, and
// the episodes a rule found (each tied to its record in the faults resource).
import { index, integer, primaryKey, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, id, updatedAt } from './columns.ts';
import { faults } from './facility.ts';

export const EQUIPMENT_TYPES = ['AHU', 'VAV', 'Chiller', 'HotWaterLoop', 'Zone', 'Meter'] as const;

/** A gateway code with its meaning: the equipment it belongs to and its Brick class, with the unit it is read in. */
export const fddPoints = sqliteTable('fdd_points', {
  code: text('code').primaryKey(),
  equipment: text('equipment').notNull(),
  equipmentType: text('equipment_type', { enum: EQUIPMENT_TYPES }).notNull(),
  brickClass: text('brick_class').notNull(),
  unit: text('unit').notNull(),
  updatedAt: updatedAt(),
});

/** Rated figures of one equipment the waste methods use (airflow, capacities, COP, fan power); defaults by type. */
export const fddEquipment = sqliteTable('fdd_equipment', {
  name: text('name').primaryKey(),
  type: text('type', { enum: EQUIPMENT_TYPES }).notNull(),
  params: text('params', { mode: 'json' }).$type<Record<string, number>>().notNull().default({}),
  updatedAt: updatedAt(),
});

/** Every version of every rule, kept: an episode names the version that found it, a change adds a row. */
export const fddRules = sqliteTable(
  'fdd_rules',
  {
    id: text('id').notNull(),
    version: integer('version').notNull(),
    definition: text('definition', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.id, t.version] })],
);

/** Whether a rule runs: switched on by a person, paused by the flood guard (with its reason). */
export const fddRuleSwitches = sqliteTable('fdd_rule_switches', {
  ruleId: text('rule_id').primaryKey(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  pausedAt: text('paused_at'),
  pausedReason: text('paused_reason'),
  updatedAt: updatedAt(),
});

/** One episode of a rule holding on one equipment: opened after its persistence, ended after its hold-off. */
export const fddEpisodes = sqliteTable(
  'fdd_episodes',
  {
    id: id(),
    ruleId: text('rule_id').notNull(),
    ruleVersion: integer('rule_version').notNull(),
    equipment: text('equipment').notNull(),
    startedAt: text('started_at').notNull(),
    lastSeenAt: text('last_seen_at').notNull(),
    endedAt: text('ended_at'),
    /** The evidence points' values at the last sample the rule held. */
    evidence: text('evidence', { mode: 'json' }).$type<Record<string, number>>().notNull(),
    /** Waste summed over the samples the rule held, kWh. */
    wasteKwh: real('waste_kwh').notNull().default(0),
    /** Hours the rule held (the span the waste was summed over). */
    heldHours: real('held_hours').notNull().default(0),
    wasteKwhPerDay: real('waste_kwh_per_day').notNull().default(0),
    wasteMoneyPerDay: real('waste_money_per_day').notNull().default(0),
    method: text('method').notNull(),
    faultId: integer('fault_id').references(() => faults.id, { onDelete: 'set null' }),
    notAFaultReason: text('not_a_fault_reason'),
    notAFaultAt: text('not_a_fault_at'),
    /** Snoozed until then (migration 0036): the rule holding again on the equipment meanwhile continues this episode. */
    snoozedUntil: text('snoozed_until'),
    snoozedBy: text('snoozed_by'),
    snoozeReason: text('snooze_reason'),
  },
  (t) => [index('fdd_episodes_rule_idx').on(t.ruleId, t.equipment, t.endedAt), index('fdd_episodes_started_idx').on(t.startedAt)],
);
