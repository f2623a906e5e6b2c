// The rule engine: one runner per rule and equipment, stepped with each collection's values (or a replay's samples).
// A rule that holds for its persistence opens an episode; the episode ends only after the condition stayed false for
// the hold-off, so a rule on the edge of its threshold does not flap. The same runner serves the live job and replays.
import type { EquipmentType } from './brick.ts';
import { compile, MODE_DEFINITIONS, type Compiled, type Scope } from './rules.ts';
import type { RuleDefinitionView } from './schemas.ts';
import { round } from '../platform/numbers.ts';

const HOUR_MS = 3_600_000;

export type EquipmentModel = {
  name: string;
  type: EquipmentType;
  params: Record<string, number>;
  /** Brick class → gateway code. */
  points: ReadonlyMap<string, string>;
};

export type EpisodeState = {
  startedAt: number;
  lastSeenAt: number;
  endedAt: number | null;
  wasteKwh: number;
  heldHours: number;
  evidence: Record<string, number>;
};

export type StepResult = 'none' | 'opened' | 'held' | 'ended';

/** A rule made ready to run: its names in slot order and its expressions as closures. */
export class CompiledRule {
  /** Input names then mode input names (prefixed "mode."), each with its class: what the runner reads. */
  readonly reads: Array<{ name: string; brickClass: string }>;
  readonly lets: Array<{ name: string; slot: number; value: Compiled }>;
  readonly condition: Compiled;
  readonly wasteKw: Compiled;
  readonly modeTest: Compiled;
  readonly slotCount: number;
  /** Slots some window reads, and the longest window in minutes. */
  readonly windowMinutes: number;
  readonly persistenceMs: number;
  readonly clearMs: number;

  constructor(readonly definition: RuleDefinitionView) {
    const mode = MODE_DEFINITIONS[definition.mode];
    this.reads = [
      ...Object.entries(definition.inputs).map(([name, brickClass]) => ({ name, brickClass })),
      ...Object.entries(mode.inputs).map(([name, brickClass]) => ({ name: `mode.${name}`, brickClass })),
    ];
    const slots = new Map(this.reads.map((read, i) => [read.name, i]));
    const lets = Object.entries(definition.let ?? {});
    for (const [i, [name]] of lets.entries()) slots.set(name, this.reads.length + i);
    this.slotCount = this.reads.length + lets.length;
    this.lets = lets.map(([name, expression]) => ({ name, slot: slots.get(name)!, value: compile(expression, slots) }));
    this.condition = compile(definition.condition, slots);
    this.wasteKw = compile(definition.waste.kw, slots);
    const modeSlots = new Map(Object.keys(mode.inputs).map((name) => [name, slots.get(`mode.${name}`)!]));
    this.modeTest = compile(mode.test, modeSlots);
    this.windowMinutes = maxWindow([definition.condition, definition.waste.kw, ...Object.values(definition.let ?? {})]);
    this.persistenceMs = definition.persistenceMinutes * 60_000;
    this.clearMs = (definition.clearMinutes ?? Math.max(30, definition.persistenceMinutes)) * 60_000;
  }

  /** What the equipment lacks for this rule: "missing <class> on <equipment>" / "missing param <p> on <equipment>". */
  missing(equipment: EquipmentModel): string[] {
    const gaps = [...new Set(this.reads.map((read) => read.brickClass))]
      .filter((brickClass) => !equipment.points.has(brickClass))
      .map((brickClass) => `missing ${brickClass} on ${equipment.name}`);
    for (const param of this.definition.params ?? []) if (!Number.isFinite(equipment.params[param])) gaps.push(`missing param ${param} on ${equipment.name}`);
    return gaps;
  }
}

function maxWindow(nodes: unknown[]): number {
  let most = 0;
  const visit = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (typeof o.minutes === 'number') most = Math.max(most, o.minutes);
    if (Array.isArray(o.args)) o.args.forEach(visit);
  };
  nodes.forEach(visit);
  return most;
}

/** Recent samples of one input, for the window functions (oldest first). */
class Window {
  private readonly at: number[] = [];
  private readonly value: number[] = [];
  private start = 0;

  push(at: number, value: number, keepMs: number): void {
    this.at.push(at);
    this.value.push(value);
    while (this.start < this.at.length && this.at[this.start]! < at - keepMs) this.start++;
    // Compact now and then: the arrays hold at most twice the window.
    if (this.start > 64 && this.start * 2 > this.at.length) {
      this.at.splice(0, this.start);
      this.value.splice(0, this.start);
      this.start = 0;
    }
  }

  /** NaN until the window is covered by samples (a flat line needs the whole span seen). */
  compute(fn: 'span' | 'transitions' | 'mean', minutes: number): number {
    const last = this.at.length - 1;
    if (last < this.start) return Number.NaN;
    const from = this.at[last]! - minutes * 60_000;
    let i = last;
    while (i > this.start && this.at[i - 1]! >= from) i--;
    // span and mean need the window seen: the oldest sample kept must reach back to (nearly) its start.
    if (fn !== 'transitions' && this.at[this.start]! > from + minutes * 6_000) return Number.NaN;
    let lo = Infinity;
    let hi = -Infinity;
    let sum = 0;
    let changes = 0;
    for (let k = i; k <= last; k++) {
      const v = this.value[k]!;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
      sum += v;
      if (k > i && v >= 0.5 !== this.value[k - 1]! >= 0.5) changes++;
    }
    return fn === 'span' ? hi - lo : fn === 'mean' ? sum / (last - i + 1) : changes;
  }
}

/** One rule on one equipment: reads its points each step and keeps the episode state. */
export class RuleRunner {
  readonly codes: string[];
  private readonly values: Float64Array;
  private readonly windows: Window[];
  private readonly scope: Scope;
  private previousAt: number | null = null;
  private holdingSince: number | null = null;
  private pendingKwh = 0;
  private pendingHours = 0;
  private falseSince: number | null = null;
  episode: EpisodeState | null = null;

  constructor(
    readonly rule: CompiledRule,
    readonly equipment: EquipmentModel,
    private readonly intervalMs: number,
    private readonly hourOf: (at: number) => number,
  ) {
    this.codes = rule.reads.map((read) => equipment.points.get(read.brickClass)!);
    this.values = new Float64Array(rule.slotCount);
    this.windows = rule.reads.map(() => new Window());
    const windows = this.windows;
    this.scope = { values: this.values, params: equipment.params, window: (slot, fn, minutes) => windows[slot]!.compute(fn, minutes), hour: 0 };
  }

  /**
   * Whether a held sample refreshes the episode's evidence (the live job shows it); a replay answers no evidence and
   * takes it only when an episode opens, which spares an object per held sample.
   */
  evidenceEverySample = true;

  /** One sample at `at`: `read` answers a code's value (undefined when the gateway had none). */
  step(at: number, read: (code: string) => number | undefined): StepResult {
    const dtHours = this.advance(at);
    for (let i = 0; i < this.codes.length; i++) {
      const value = read(this.codes[i]!);
      // A missing value: nothing is known at this sample, the rule neither holds nor clears.
      if (value === undefined || !Number.isFinite(value)) return 'none';
      this.values[i] = value;
    }
    return this.decide(at, dtHours);
  }

  /**
   * One sample of a replay: `columns[i]` is the series of `codes[i]` on the replay's step grid (NaN where the gateway
   * had nothing), `k` the step. The same decision as `step`, without a lookup per code.
   */
  stepColumns(at: number, columns: readonly Float64Array[], k: number): StepResult {
    const dtHours = this.advance(at);
    for (let i = 0; i < columns.length; i++) {
      const value = columns[i]![k]!;
      if (!Number.isFinite(value)) return 'none';
      this.values[i] = value;
    }
    return this.decide(at, dtHours);
  }

  /** The hours this sample stands for. */
  private advance(at: number): number {
    // A sample stands for the time since the one before, up to a gap of two intervals (15 min at least): past that the
    // gateway was away and the waste of the gap is not counted.
    const dtHours = Math.min(this.previousAt === null ? this.intervalMs : at - this.previousAt, Math.max(2 * this.intervalMs, 15 * 60_000)) / HOUR_MS;
    this.previousAt = at;
    return dtHours;
  }

  private decide(at: number, dtHours: number): StepResult {
    const keepMs = this.rule.windowMinutes * 60_000;
    if (keepMs > 0) for (let i = 0; i < this.codes.length; i++) this.windows[i]!.push(at, this.values[i]!, keepMs);
    this.scope.hour = this.hourOf(at);
    for (const { slot, value } of this.rule.lets) this.values[slot] = value(this.scope);
    if (!this.rule.modeTest(this.scope)) {
      // Outside the rule's mode the rule says nothing: a hold does not carry over, an open episode waits.
      this.holdingSince = null;
      return 'none';
    }
    const holds = this.rule.condition(this.scope);
    if (holds !== 0 && !Number.isNaN(holds)) {
      const kw = this.rule.wasteKw(this.scope);
      const kwh = Number.isFinite(kw) && kw > 0 ? kw * dtHours : 0;
      this.falseSince = null;
      if (this.episode) {
        this.episode.wasteKwh += kwh;
        this.episode.heldHours += dtHours;
        this.episode.lastSeenAt = at;
        if (this.evidenceEverySample) this.episode.evidence = this.evidence();
        return 'held';
      }
      if (this.holdingSince === null) {
        this.holdingSince = at;
        this.pendingKwh = 0;
        this.pendingHours = 0;
      }
      this.pendingKwh += kwh;
      this.pendingHours += dtHours;
      if (at - this.holdingSince < this.rule.persistenceMs) return 'none';
      this.episode = {
        startedAt: this.holdingSince,
        lastSeenAt: at,
        endedAt: null,
        wasteKwh: this.pendingKwh,
        heldHours: this.pendingHours,
        evidence: this.evidence(),
      };
      return 'opened';
    }
    this.holdingSince = null;
    if (!this.episode) return 'none';
    this.falseSince ??= at;
    if (at - this.falseSince < this.rule.clearMs) return 'none';
    this.episode.endedAt = this.episode.lastSeenAt;
    this.episode = null;
    this.falseSince = null;
    return 'ended';
  }

  private evidence(): Record<string, number> {
    const out: Record<string, number> = {};
    this.rule.reads.forEach((read, i) => {
      if (!read.name.startsWith('mode.') && Number.isFinite(this.values[i])) out[read.name] = round(this.values[i]!, 3);
    });
    for (const { name, slot } of this.rule.lets) if (Number.isFinite(this.values[slot])) out[name] = round(this.values[slot]!, 3);
    return out;
  }
}
