// Fault detection shapes: a rule as data, point mappings, equipment, episodes, replays.
import { Type, type Static } from '@sinclair/typebox';
import { EQUIPMENT_TYPES } from '../platform/db/schema/index.ts';
import { Timestamp, stringEnum } from '../platform/http/schemas.ts';

export const EquipmentTypeSchema = stringEnum(EQUIPMENT_TYPES);
export const MODES = ['any', 'fan_on', 'occupied', 'unoccupied', 'heating', 'cooling', 'economiser', 'night'] as const;
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

const Name = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,39}$' });

/**
 * An expression over the rule's inputs: a number; `{ "p": name }` (an input or a `let` value); `{ "param": name }` (a
 * rated figure of the equipment); `{ "op": …, "args": [...] }`; `{ "fn": "span" | "transitions" | "mean", "p": name,
 * "minutes": n }` over the input's recent samples; `{ "fn": "hour" }` (the hour of the day, site time). Checked
 * recursively by `checkExpression` (rules.ts), which names the path of a bad node.
 */
export const Expression = Type.Unknown({
  description:
    'number | {p} | {param} | {op: and|or|not|gt|ge|lt|le|eq|add|sub|mul|div|abs|min|max|if, args} | {fn: span|transitions|mean, p, minutes} | {fn: hour}',
});

export const RuleDefinition = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,63}$' }),
    version: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    title: Type.String({ minLength: 3, maxLength: 200 }),
    description: Type.String({ maxLength: 2000 }),
    source: Type.Object(
      {
        scheme: stringEnum(['G36', 'APAR', 'VPACC', 'EMS'] as const),
        ref: Type.String({ minLength: 1, maxLength: 200, description: 'e.g. "FC#15" or "mode 5"' }),
      },
      { additionalProperties: false },
    ),
    equipmentType: EquipmentTypeSchema,
    /** Input name → the Brick class of the equipment's point it reads. */
    inputs: Type.Record(Name, Type.String({ minLength: 1, maxLength: 80 }), { minProperties: 1, maxProperties: 12 }),
    /** Rated figures the expressions read ({param}); a missing one leaves the rule unable to run on that equipment. */
    params: Type.Optional(Type.Array(Name, { maxItems: 12 })),
    /** Derived values, in order (each may use the inputs and the ones before it). */
    let: Type.Optional(Type.Record(Name, Expression, { maxProperties: 12 })),
    mode: stringEnum(MODES),
    condition: Expression,
    persistenceMinutes: Type.Integer({ minimum: 0, maximum: 7 * 24 * 60 }),
    /** How long the condition must stay false before the episode ends (the hold-off); default: the persistence, at least 30 min. */
    clearMinutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 60 })),
    severity: stringEnum(SEVERITIES),
    waste: Type.Object(
      {
        method: Type.String({ minLength: 3, maxLength: 500 }),
        /** Electric kW wasted while the condition holds; 0 for a rule with no energy estimate. */
        kw: Expression,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type RuleDefinitionView = Static<typeof RuleDefinition>;

export const PointMapping = Type.Object({
  code: Type.String(),
  equipment: Type.String(),
  equipmentType: EquipmentTypeSchema,
  brickClass: Type.String(),
  unit: Type.String(),
  updatedAt: Timestamp,
});

export const PointMappingBody = Type.Object(
  {
    equipment: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 ._-]*$' }),
    equipmentType: EquipmentTypeSchema,
    brickClass: Type.String({ minLength: 1, maxLength: 80 }),
    unit: Type.String({ maxLength: 20 }),
  },
  { additionalProperties: false },
);
export type PointMappingInput = Static<typeof PointMappingBody>;

export const CodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 200 }) });
export const RuleParams = Type.Object({ id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,63}$' }) });

export const Suggestion = Type.Object({
  code: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  equipment: Type.Union([Type.String(), Type.Null()]),
  equipmentType: Type.Union([EquipmentTypeSchema, Type.Null()]),
  brickClass: Type.Union([Type.String(), Type.Null()]),
  unit: Type.String(),
  mapped: Type.Boolean({ description: 'true when the code already has a confirmed mapping (then the mapping is shown)' }),
});

export const ImportOutcome = Type.Object({ imported: Type.Integer(), refused: Type.Array(Type.Object({ line: Type.Integer(), error: Type.String() })) });

export const Equipment = Type.Object({
  name: Type.String(),
  type: EquipmentTypeSchema,
  params: Type.Record(Type.String(), Type.Number()),
  points: Type.Array(Type.Object({ code: Type.String(), brickClass: Type.String(), unit: Type.String() })),
});
export const EquipmentParamsBody = Type.Object(
  { type: EquipmentTypeSchema, params: Type.Record(Name, Type.Number({ minimum: -1e6, maximum: 1e6 }), { maxProperties: 30 }) },
  { additionalProperties: false },
);
export const EquipmentParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) });

export const RuleSummary = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  title: Type.String(),
  source: Type.Object({ scheme: Type.String(), ref: Type.String() }),
  equipmentType: EquipmentTypeSchema,
  enabled: Type.Boolean(),
  paused: Type.Union([Type.Object({ at: Timestamp, reason: Type.String() }), Type.Null()]),
  /** Per equipment of the rule's type: "runs", or "cannot run: missing <class> on <equipment>". */
  status: Type.Array(Type.String()),
  hits: Type.Integer({ description: 'episodes found, every version' }),
  notAFault: Type.Integer({ description: 'episodes marked "not a fault"' }),
  notAFaultRate: Type.Union([Type.Number(), Type.Null()]),
  definition: RuleDefinition,
});

export const RuleSwitchBody = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });

export const Episode = Type.Object({
  id: Type.Integer(),
  ruleId: Type.String(),
  ruleVersion: Type.Integer(),
  title: Type.String(),
  equipment: Type.String(),
  startedAt: Timestamp,
  lastSeenAt: Timestamp,
  endedAt: Type.Union([Timestamp, Type.Null()]),
  evidence: Type.Record(Type.String(), Type.Number()),
  wasteKwh: Type.Number({ description: 'kWh summed over the samples the rule held' }),
  wasteKwhPerDay: Type.Number(),
  wasteMoneyPerDay: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  faultId: Type.Union([Type.Integer(), Type.Null()]),
  notAFault: Type.Union([Type.Object({ reason: Type.String(), at: Timestamp }), Type.Null()]),
  snoozed: Type.Union([Type.Object({ until: Timestamp, by: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) }), Type.Null()], {
    description: 'the last snooze, if any; while `until` is ahead the rule finding the fault again continues this episode',
  }),
});
export type EpisodeView = Static<typeof Episode>;

export const EpisodeListQuery = Type.Object(
  {
    open: Type.Optional(Type.Boolean({ description: 'true: only episodes not yet ended' })),
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  },
  { additionalProperties: false },
);

export const NotAFaultBody = Type.Object({ reason: Type.String({ minLength: 3, maxLength: 1000 }) }, { additionalProperties: false });
export const EquipmentView = Type.Object({
  name: Type.String(),
  type: EquipmentTypeSchema,
  params: Type.Record(Type.String(), Type.Number()),
  points: Type.Array(
    Type.Object({
      code: Type.String(),
      brickClass: Type.String(),
      unit: Type.String(),
      value: Type.Union([Type.Number(), Type.Null()], { description: "the gateway's latest value; null when it has none or the gateway is away" }),
      at: Type.Union([Timestamp, Type.Null()]),
      good: Type.Boolean(),
    }),
  ),
  gateway: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
  episodes: Type.Array(Episode),
});

export const Evidence = Type.Object({
  episodeId: Type.Integer(),
  ruleId: Type.String(),
  ruleVersion: Type.Integer(),
  equipment: Type.String(),
  from: Timestamp,
  to: Timestamp,
  span: Type.Object({ from: Timestamp, to: Timestamp }, { description: "the episode's span, to shade" }),
  series: Type.Array(
    Type.Object({
      name: Type.String({ description: "the rule's name for the input" }),
      brickClass: Type.String(),
      code: Type.Union([Type.String(), Type.Null()], { description: 'null when the equipment no longer has the class' }),
      unit: Type.String(),
      at: Type.Array(Timestamp),
      value: Type.Array(Type.Number()),
    }),
  ),
});

export const SnoozeBody = Type.Object(
  {
    until: Timestamp,
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });

export const ReplayBody = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    /** Default: every equipment the rule can run on. */
    equipment: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500 })),
    /** Sample step of the history read, minutes (default 5). */
    stepMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
    /** A rule not yet saved (try it before it is saved); default: the rule's newest version. */
    definition: Type.Optional(RuleDefinition),
  },
  { additionalProperties: false },
);

export const ReplayOutcome = Type.Object({
  ruleId: Type.String(),
  ruleVersion: Type.Integer(),
  from: Timestamp,
  to: Timestamp,
  episodes: Type.Array(
    Type.Object({
      equipment: Type.String(),
      startedAt: Timestamp,
      lastSeenAt: Timestamp,
      endedAt: Type.Union([Timestamp, Type.Null()]),
      wasteKwh: Type.Number(),
      wasteMoney: Type.Number(),
    }),
  ),
  wasteKwh: Type.Number(),
  wasteMoney: Type.Number(),
  currency: Type.String(),
  cannotRun: Type.Array(Type.String()),
});
