// The live side: at every collection the mapped points' values are read once from the gateway and every switched-on
// rule steps on every equipment it can run on; an episode opens its fault, a rule that floods is paused with an alert.
// And the "try before trust" side: any rule replayed over a past period of the gateway's history.
import type { AlertService } from '../facility/index.ts';
import type { GatewayPort, HistoryOnGrid } from '../gateway/index.ts';
import { BadRequest } from '../platform/errors.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import { CompiledRule, RuleRunner, type EpisodeState } from './engine.ts';
import type { Episodes } from './episodes.ts';
import type { PointModel } from './pointModel.ts';
import type { RuleBook } from './ruleBook.ts';
import { checkRule } from './rules.ts';
import type { RuleDefinitionView } from './schemas.ts';

const HOUR_MS = 3_600_000;
/** The gateway answers at most this many history samples per request (DESIGN.md); a replay asks in slices of it. */
const HISTORY_SLICE_SAMPLES = 500;
const MAX_REPLAY_MS = 93 * 24 * HOUR_MS;
/** Values per history answer on the step grid (codes/history's optional `step`): a month at 5 minutes is one answer. */
const GRID_SLICE_VALUES = 10_000;
/**
 * History reads a replay keeps in flight at once. One: npm run bench:fdd measured 2 and 4 in flight slower in wall time
 * than one at a time against a loopback gateway, with plain answers and with answers on the grid alike (both sides
 * CPU-bound on the 2-core box); a gateway across a network, where each read waits a round trip, may gain from more
 * (`reads`), unmeasured.
 */
export const REPLAY_READS = 1;

export type DetectorNeeds = {
  model: PointModel;
  book: RuleBook;
  episodes: Episodes;
  alerts: AlertService;
  port: GatewayPort;
  /** Electricity price and currency, read at each write (the site's settings). */
  price: () => { price: number; currency: string };
  /** The site's time zone (the "night" mode and {fn: hour}). */
  timezone: () => string;
  intervalMs: number;
  floodPerHour: number;
  logger: Logger;
  now?: () => number;
};

type Live = { runner: RuleRunner; episodeId: number | null };

/** The hour of the day in a zone, remembered for the last instant asked (every runner of a step asks the same). */
function hourClock(timezone: () => string): (at: number) => number {
  let zone = '';
  let format: Intl.DateTimeFormat | undefined;
  let lastAt = Number.NaN;
  let lastHour = 0;
  return (at) => {
    if (at === lastAt) return lastHour;
    const current = timezone();
    if (current !== zone || !format) {
      zone = current;
      format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: 'numeric', hourCycle: 'h23' });
    }
    lastAt = at;
    lastHour = Number(format.format(at)) % 24;
    return lastHour;
  };
}

export class FaultDetector {
  readonly job: Repeating | undefined;
  private live: Live[] = [];
  private builtFor = '';
  private codes: string[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private readonly hourOf: (at: number) => number;
  /** /metrics: evaluations run and their time. */
  readonly stats = { evaluations: 0, seconds: 0, runners: 0 };

  constructor(private readonly needs: DetectorNeeds) {
    this.hourOf = hourClock(needs.timezone);
    this.job = needs.intervalMs > 0 ? new Repeating(() => this.evaluate(), needs.intervalMs, 'fault rule evaluation') : undefined;
  }

  private now(): number {
    return (this.needs.now ?? Date.now)();
  }

  /** The runners for the switched-on, unpaused rules on every equipment each can run on; rebuilt when the model or a rule changes. */
  private runners(): Live[] {
    const key = `${this.needs.model.revision}/${this.needs.book.revision}`;
    if (key === this.builtFor) return this.live;
    const switches = this.needs.book.switchOf();
    const equipment = this.needs.model.equipment();
    const previous = new Map(
      this.live.map((live) => [`${live.runner.rule.definition.id}@${live.runner.rule.definition.version}/${live.runner.equipment.name}`, live]),
    );
    const live: Live[] = [];
    for (const rule of this.needs.book.current().values()) {
      const on = switches.get(rule.id) ?? { enabled: true, paused: null };
      if (!on.enabled || on.paused) continue;
      const compiled = new CompiledRule(rule);
      for (const unit of equipment) {
        if (unit.type !== rule.equipmentType || compiled.missing(unit).length) continue;
        // A runner keeps its state across a rebuild unless its rule changed (then it starts afresh with the new version).
        const kept = previous.get(`${rule.id}@${rule.version}/${unit.name}`);
        if (kept && sameModel(kept.runner.equipment, unit)) {
          live.push(kept);
          continue;
        }
        const runner = new RuleRunner(compiled, unit, this.needs.intervalMs || 60_000, this.hourOf);
        const open = this.needs.episodes.open(rule.id, unit.name);
        if (open)
          runner.episode = {
            startedAt: Date.parse(open.startedAt),
            lastSeenAt: Date.parse(open.lastSeenAt),
            endedAt: null,
            wasteKwh: open.wasteKwh,
            heldHours: open.heldHours,
            evidence: open.evidence,
          };
        live.push({ runner, episodeId: open?.id ?? null });
      }
    }
    this.live = live;
    this.codes = [...new Set(live.flatMap((l) => l.runner.codes))];
    this.builtFor = key;
    this.stats.runners = live.length;
    return live;
  }

  /** One evaluation (the job's tick; tests call it): evaluations never overlap. */
  evaluate(): Promise<{ runners: number; opened: number; ended: number }> {
    const run = this.chain.then(() => this.evaluateOnce());
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async evaluateOnce(): Promise<{ runners: number; opened: number; ended: number }> {
    const live = this.runners();
    if (!live.length) return { runners: 0, opened: 0, ended: 0 };
    const values = new Map<string, number>();
    for (let i = 0; i < this.codes.length; i += 1000)
      for (const row of await this.needs.port.values(this.codes.slice(i, i + 1000)))
        if (row.good && row.value !== null) values.set(row.code, typeof row.value === 'boolean' ? Number(row.value) : row.value);
    const started = performance.now();
    const at = this.now();
    const outcome = this.step(live, at, (code) => values.get(code));
    this.stats.evaluations++;
    this.stats.seconds += (performance.now() - started) / 1000;
    return { runners: live.length, ...outcome };
  }

  /** Steps every runner at `at` and writes what changed (exported for the bench: the evaluation without the gateway). */
  step(live: Live[], at: number, read: (code: string) => number | undefined): { opened: number; ended: number } {
    const { price } = this.needs.price();
    let opened = 0;
    let ended = 0;
    const paused = new Set<string>();
    for (const entry of live) {
      const rule = entry.runner.rule.definition;
      if (paused.has(rule.id)) continue;
      const episode = entry.runner.episode;
      const result = entry.runner.step(at, read);
      if (result === 'opened') {
        // Snoozed: the fault found again continues its episode (one record, no new fault) until the snooze ends.
        const snoozed = this.needs.episodes.snoozed(rule.id, entry.runner.equipment.name, at);
        if (snoozed) {
          const state = entry.runner.episode!;
          state.startedAt = Date.parse(snoozed.startedAt);
          state.wasteKwh += snoozed.wasteKwh;
          state.heldHours += snoozed.heldHours;
          this.needs.episodes.resume(snoozed.id, state, price);
          entry.episodeId = snoozed.id;
          continue;
        }
        if (this.flooding(rule, at)) {
          paused.add(rule.id);
          entry.runner.episode = null;
          continue;
        }
        entry.episodeId = this.needs.episodes.start(rule, entry.runner.equipment.name, entry.runner.episode!, price);
        opened++;
      } else if ((result === 'held' || result === 'ended') && entry.episodeId !== null) {
        this.needs.episodes.touch(entry.episodeId, (entry.runner.episode ?? episode) as EpisodeState, price);
        if (result === 'ended') {
          entry.episodeId = null;
          ended++;
        }
      }
    }
    return { opened, ended };
  }

  /** Past the hourly limit the rule is paused with an alert, and its new episode is not opened. */
  private flooding(rule: RuleDefinitionView, at: number): boolean {
    const opened = this.needs.episodes.countSince(rule.id, new Date(at - HOUR_MS).toISOString());
    if (opened < this.needs.floodPerHour) return false;
    const reason = `opened ${opened} faults within an hour (limit ${this.needs.floodPerHour}, EMS_FDD_FLOOD_PER_HOUR)`;
    this.needs.book.pause(rule.id, reason, new Date(at).toISOString());
    this.needs.alerts.create(
      {
        title: `Fault rule ${rule.id} paused`,
        message: `${rule.title}: ${reason}. Check the rule and its points, then switch it on again.`,
        level: 'warning',
        source: `fdd:${rule.id}`,
      },
      null,
    );
    this.needs.logger.warn({ rule: rule.id, opened }, 'fault rule paused: it floods');
    return true;
  }

  /** Per equipment of the rule's type: "runs on X", or "cannot run: missing <class> on <equipment>". */
  status(rule: RuleDefinitionView): string[] {
    const compiled = new CompiledRule(rule);
    const units = this.needs.model.equipment().filter((unit) => unit.type === rule.equipmentType);
    if (!units.length) return [`cannot run: no ${rule.equipmentType} equipment is mapped`];
    return units.map((unit) => {
      const missing = compiled.missing(unit);
      return missing.length ? `cannot run: ${missing.join('; ')}` : `runs on ${unit.name}`;
    });
  }

  /** Runs a rule over [from, to) of the gateway's history: its episodes and their waste, written nowhere. */
  async replay(
    rule: RuleDefinitionView,
    options: { from: number; to: number; equipment?: string[]; stepMinutes?: number; reads?: number },
  ): Promise<{ episodes: Array<EpisodeState & { equipment: string }>; cannotRun: string[] }> {
    const errors = checkRule(rule, 'body.definition');
    if (errors.length) throw new BadRequest(`the rule is malformed: ${errors[0]!.path} ${errors[0]!.message}`, errors);
    if (!(options.from < options.to)) throw new BadRequest('from must be before to', [{ path: 'body.from', message: 'must be before to' }]);
    if (options.to - options.from > MAX_REPLAY_MS)
      throw new BadRequest('at most 93 days per replay', [{ path: 'body.to', message: 'at most 93 days after from' }]);
    const stepMs = (options.stepMinutes ?? 5) * 60_000;
    const compiled = new CompiledRule(rule);
    const cannotRun: string[] = [];
    const units = this.needs.model
      .equipment()
      .filter((unit) => unit.type === rule.equipmentType && (!options.equipment || options.equipment.includes(unit.name)));
    const runnable = units.filter((unit) => {
      const missing = compiled.missing(unit);
      cannotRun.push(...missing);
      return missing.length === 0;
    });
    const runners = runnable.map((unit) => {
      const runner = new RuleRunner(compiled, unit, stepMs, this.hourOf);
      runner.evidenceEverySample = false;
      return runner;
    });
    const first = Math.ceil(options.from / stepMs) * stepMs;
    const steps = Math.max(0, Math.ceil((options.to - first) / stepMs));
    // Each code's history laid on the step grid once (NaN where the gateway had nothing within a step): a step then
    // reads an array, not a search. The codes are read REPLAY_READS at a time (`reads` overrides it): over HTTP a month
    // of 1,000 codes is 18,000 answers of 500 samples, which cost more than the replay itself.
    const grid = new Map<string, Float64Array>();
    const codes = [...new Set(runners.flatMap((runner) => runner.codes))];
    let next = 0;
    const span = { from: options.from, to: options.to, first, stepMs, steps };
    const gateway = { ignoresStep: false };
    const reader = async () => {
      while (next < codes.length) {
        const code = codes[next++]!;
        grid.set(code, await this.column(code, span, gateway));
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.reads ?? REPLAY_READS, codes.length) }, reader));
    const columns = runners.map((runner) => runner.codes.map((code) => grid.get(code)!));
    const episodes: Array<EpisodeState & { equipment: string }> = [];
    for (let k = 0; k < steps; k++) {
      const at = first + k * stepMs;
      for (let r = 0; r < runners.length; r++) {
        const runner = runners[r]!;
        const before = runner.episode;
        const result = runner.stepColumns(at, columns[r]!, k);
        if (result === 'opened') episodes.push(Object.assign(runner.episode!, { equipment: runner.equipment.name }));
        else if (result === 'ended' && before) before.endedAt ??= before.lastSeenAt;
      }
    }
    return { episodes, cannotRun };
  }

  /**
   * A code's values on the replay's step grid. Asked with codes/history's optional `step` (the values on the grid, no
   * time per sample: a month of 5-minute steps is one answer); when the gateway ignores the step (its plain answer
   * comes back) the rest of the replay reads as before: plain readings in slices of 500 samples, laid on the grid.
   */
  private async column(
    code: string,
    span: { from: number; to: number; first: number; stepMs: number; steps: number },
    gateway: { ignoresStep: boolean },
  ): Promise<Float64Array> {
    const { first, stepMs, steps } = span;
    const port = this.needs.port;
    if (port.historyOnGrid && !gateway.ignoresStep) {
      const out = new Float64Array(steps).fill(Number.NaN);
      for (let k = 0; k < steps && !gateway.ignoresStep; k += GRID_SLICE_VALUES) {
        const last = Math.min(steps, k + GRID_SLICE_VALUES) - 1;
        const answer: HistoryOnGrid | null = await port.historyOnGrid(code, first + k * stepMs, first + last * stepMs, stepMs);
        if (!answer) continue;
        if ('points' in answer) gateway.ignoresStep = true;
        else
          for (let i = 0; i < answer.grid.values.length; i++) {
            const at = (answer.grid.first - first) / stepMs + i;
            if (Number.isInteger(at) && at >= k && at <= last) out[at] = answer.grid.values[i]!;
          }
      }
      if (!gateway.ignoresStep) return out;
    }
    return onGrid(await this.history(code, span.from, span.to, stepMs), first, stepMs, steps);
  }

  /** A code's history over [from, to), read in slices the gateway answers whole at `stepMs`. */
  private async history(code: string, from: number, to: number, stepMs: number): Promise<{ at: number[]; value: number[] }> {
    const out = { at: [] as number[], value: [] as number[] };
    const slice = HISTORY_SLICE_SAMPLES * stepMs;
    for (let start = from; start < to; start += slice) {
      const rows = (await this.needs.port.history(code, start, Math.min(to, start + slice - 1))) ?? [];
      for (const row of rows)
        if (!out.at.length || row.at > out.at[out.at.length - 1]!) {
          out.at.push(row.at);
          out.value.push(row.value);
        }
    }
    return out;
  }
}

/** The series on the step grid: at each step the newest sample at or before it, if at most one step old; NaN otherwise. */
function onGrid(series: { at: number[]; value: number[] }, first: number, stepMs: number, steps: number): Float64Array {
  const out = new Float64Array(steps).fill(Number.NaN);
  let i = 0;
  for (let k = 0; k < steps; k++) {
    const at = first + k * stepMs;
    while (i + 1 < series.at.length && series.at[i + 1]! <= at) i++;
    const t = series.at[i];
    if (t !== undefined && t <= at && at - t <= stepMs) out[k] = series.value[i]!;
  }
  return out;
}

function sameModel(
  a: { points: ReadonlyMap<string, string>; params: Record<string, number> },
  b: { points: ReadonlyMap<string, string>; params: Record<string, number> },
): boolean {
  if (a.points.size !== b.points.size || JSON.stringify(a.params) !== JSON.stringify(b.params)) return false;
  for (const [k, v] of a.points) if (b.points.get(k) !== v) return false;
  return true;
}
