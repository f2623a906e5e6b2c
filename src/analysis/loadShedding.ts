// Load shedding (optional, off by default, admin-only): when the peak warning's projection of the running 15-minute
// window passes the contracted peak, gateway points are written to their shed values, lowest priority number first,
// one per collection while the projection stays above; they are restored (last shed first, one per collection) once
// their window is over and the projection is back below 95 % of the contract, never before their minimum off time,
// and always after their maximum shed duration. Every write is audited; a write the gateway cannot confirm (an error,
// a refusal, or a read-back that differs) is reported as an alert and the point is not counted as shed.
// The safety restores (maximum shed duration, disabled, no contract, left shed by an earlier run, a restore the gateway
// refused) do not depend on collections: src/analysis/loadSheddingGuard.ts runs them on their own timer and at stop.
// Durations count on the monotonic clock too (the longer of the two wins): a wall clock stepping back cannot keep a
// point shed, and a stored time ahead of the clock is a clock step, clamped to now and logged (issue 39).
import type { AlertService } from '../facility/index.ts';
import { type DemandWatch, WARNING_MIN_ELAPSED_MS } from '../energy/index.ts';
import { FUTURE_TOLERANCE_MS } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { GatewayPort } from '../gateway/index.ts';
import { performance } from 'node:perf_hooks';
import { RestoreBackoff } from './restoreBackoff.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { slot } from '../platform/db/listQuery.ts';
import { loadShedPoints, loadShedSettings } from '../platform/db/schema/index.ts';
import { dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { BadRequest, Conflict } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { round } from '../platform/numbers.ts';

export const UNCONFIRMED_CODE = 'energy.load_shedding.unconfirmed';
/** A shed point the service could not switch back on (critical): raised once per point while it fails, cleared by the restore. */
export const RESTORE_FAILED_CODE = 'energy.load_shedding.restore_failed';
/** A stored shed time, window or rest this far ahead of the clock means the clock stepped back. */
export const CLOCK_STEP_TOLERANCE_MS = FUTURE_TOLERANCE_MS;
/** Restored only once the projection is at most this share of the contract: no shed–restore flapping at the limit. */
export const RESTORE_BELOW_SHARE = 0.95;
/** A read-back this close to the written value confirms it. */
const READ_BACK_TOLERANCE = 1e-6;

export type LoadShedSettings = { enabled: boolean; minOffSec: number; maxShedSec: number };
export type LoadShedPointInput = { code: string; priority: number; shedValue: number; restoreValue: number };
type PointRow = LoadShedPointInput & {
  id: number;
  shedAt: number | null;
  shedWindow: number | null;
  notBefore: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};
export type LoadShedAction = { code: string; action: 'shed' | 'restore'; confirmed: boolean; reason: string };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The settings and the point list, read and replaced as one (admin-only routes). */
export class LoadSheddingConfig {
  private readonly readSettings;
  private readonly readPoints;
  private apply: () => Promise<void> = async () => {};

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
  ) {
    // The settings' one row (id 1, seeded by the migration) and the points in shedding order.
    this.readSettings = db.orm
      .select({ enabled: loadShedSettings.enabled, minOffSec: loadShedSettings.minOffSec, maxShedSec: loadShedSettings.maxShedSec })
      .from(loadShedSettings)
      .where(eq(loadShedSettings.id, 1))
      .prepare();
    this.readPoints = db.orm
      .select({
        id: loadShedPoints.id,
        code: loadShedPoints.code,
        priority: loadShedPoints.priority,
        shedValue: loadShedPoints.shedValue,
        restoreValue: loadShedPoints.restoreValue,
        shedAt: loadShedPoints.shedAt,
        shedWindow: loadShedPoints.shedWindow,
        notBefore: loadShedPoints.notBefore,
        lastError: loadShedPoints.lastError,
        lastErrorAt: loadShedPoints.lastErrorAt,
      })
      .from(loadShedPoints)
      .orderBy(asc(loadShedPoints.priority), asc(loadShedPoints.id))
      .prepare();
  }

  /** What runs after each replace (the service's guard: the safety restores, so turning it off restores at once). */
  afterReplace(apply: () => Promise<void>): void {
    this.apply = apply;
  }

  /** replace(), then the safety restores (bounded by the guard); answers the state after them. */
  async replaceAndApply(input: LoadShedSettings & { points: LoadShedPointInput[] }, actor: Actor) {
    this.replace(input, actor);
    await this.apply();
    return this.view();
  }

  settings(): LoadShedSettings {
    const row = this.readSettings.get();
    if (!row) throw new Error('load_shed_settings has no row 1 (seeded by the migrations)');
    return { enabled: row.enabled, minOffSec: row.minOffSec, maxShedSec: row.maxShedSec };
  }

  points(): PointRow[] {
    return this.readPoints.all();
  }

  view() {
    return {
      ...this.settings(),
      points: this.points().map((p) => ({
        code: p.code,
        priority: p.priority,
        shedValue: p.shedValue,
        restoreValue: p.restoreValue,
        shed: p.shedAt !== null,
        shedAt: iso(p.shedAt),
        notBefore: iso(p.notBefore),
        lastError: p.lastError,
        lastErrorAt: iso(p.lastErrorAt),
      })),
    };
  }

  /**
   * Replaces settings and list in one audited transaction. A point that is shed now keeps its state and cannot be
   * dropped from the list (409: disable first, it is restored once its minimum off time has passed).
   */
  replace(input: LoadShedSettings & { points: LoadShedPointInput[] }, actor: Actor) {
    if (input.maxShedSec < input.minOffSec) throw new BadRequest('Invalid body', [{ path: 'body.maxShedSec', message: 'must be at least minOffSec' }]);
    const codes = new Set<string>();
    input.points.forEach((point, i) => {
      if (codes.has(point.code)) throw new BadRequest('Invalid body', [{ path: `body.points.${i}.code`, message: `${point.code} is listed twice` }]);
      codes.add(point.code);
    });
    return this.db.sqlite.transaction(() => {
      const before = this.view();
      const existing = this.points();
      for (const point of existing) {
        if (codes.has(point.code)) continue;
        if (point.shedAt !== null) throw new Conflict(`${point.code} is shed now: disable load shedding and let it be restored before removing it`);
        this.db.orm.delete(loadShedPoints).where(eq(loadShedPoints.code, point.code)).run();
      }
      for (const point of input.points) {
        const values = { priority: point.priority, shedValue: point.shedValue, restoreValue: point.restoreValue };
        if (existing.some((e) => e.code === point.code)) this.db.orm.update(loadShedPoints).set(values).where(eq(loadShedPoints.code, point.code)).run();
        else
          this.db.orm
            .insert(loadShedPoints)
            .values({ code: point.code, ...values })
            .run();
      }
      this.db.orm
        .update(loadShedSettings)
        .set({ enabled: input.enabled, minOffSec: input.minOffSec, maxShedSec: input.maxShedSec })
        .where(eq(loadShedSettings.id, 1))
        .run();
      const after = this.view();
      this.audit.record({ actor, action: 'replace', resource: 'load_shedding', before, after });
      return after;
    })();
  }
}

/**
 * The controller: one evaluation after each collection (the service's collector calls it), and the safety restores
 * (enforce) on the guard's timer, after a settings change and at stop. Never two at once: an evaluation finding one
 * running is skipped, a safety run waits its turn.
 */
export class LoadShedder {
  private busy: Promise<LoadShedAction[]> | null = null;
  private stopped = false;
  /** Monotonic time (ms) each shed point has been shed since, as far as this process knows. */
  private readonly shedSince = new Map<number, number>();
  /** Points found shed when this process started: a run that stopped without restoring them left them. */
  private readonly leftovers = new Set<number>();
  private readonly markShed;
  private readonly markRestored;
  private readonly markError;
  private readonly clamp;
  private readonly monotonic: () => number;
  /** When a restore the gateway did not confirm is tried again (src/analysis/restoreBackoff.ts). */
  private readonly backoff: RestoreBackoff;

  constructor(
    private readonly deps: {
      db: Db;
      audit: AuditLog;
      config: LoadSheddingConfig;
      iot: Pick<GatewayPort, 'set' | 'values'>;
      demand: Pick<DemandWatch, 'projectedKw' | 'sustainedAbove'>;
      tariffs: Tariffs;
      alerts: Pick<AlertService, 'fromGatewayAlarm'>;
      logger: Logger;
      timezone: () => string;
      /** Milliseconds on a clock that never steps (performance.now by default). */
      monotonic?: () => number;
    },
  ) {
    const { orm } = deps.db;
    this.monotonic = deps.monotonic ?? (() => performance.now());
    this.backoff = new RestoreBackoff(this.monotonic);
    const byId = eq(loadShedPoints.id, sql.placeholder('id'));
    this.markShed = orm
      .update(loadShedPoints)
      .set({ shedAt: slot('shedAt'), shedWindow: slot('shedWindow'), lastError: null, lastErrorAt: null })
      .where(byId)
      .prepare();
    this.markRestored = orm
      .update(loadShedPoints)
      .set({ shedAt: null, shedWindow: null, notBefore: slot('notBefore'), lastError: null, lastErrorAt: null })
      .where(byId)
      .prepare();
    // Keeps the stored not_before unless a new one is given.
    this.markError = orm
      .update(loadShedPoints)
      .set({
        lastError: slot('error'),
        lastErrorAt: slot('at'),
        notBefore: sql`coalesce(${sql.placeholder('notBefore')}, ${loadShedPoints.notBefore})`,
      })
      .where(byId)
      .prepare();
    this.clamp = orm
      .update(loadShedPoints)
      .set({ shedAt: slot('shedAt'), shedWindow: slot('shedWindow'), notBefore: slot('notBefore') })
      .where(byId)
      .prepare();
  }

  /** What this evaluation wrote; nothing while another evaluation is still running, or once stopping. */
  async evaluate(now: number): Promise<LoadShedAction[]> {
    if (this.busy || this.stopped) return [];
    return this.exclusive(() => this.step(now));
  }

  /**
   * The safety restores alone, whatever the collector does: after the maximum shed duration, when disabled, with no
   * contract in effect, points left by an earlier run (after their minimum off time), and restores the gateway did not
   * confirm. With `all`, every shed point is restored now for that reason (the service stopping). Waits for a run in flight.
   */
  async enforce(now: number, all?: string): Promise<LoadShedAction[]> {
    while (this.busy) await this.busy;
    return this.exclusive(() => this.safety(now, all));
  }

  /** At start: the points stored as shed were left by a run that did not restore them (a crash, a power cut). */
  adoptLeftovers(now: number): string[] {
    const shed = this.deps.config.points().filter((p) => p.shedAt !== null);
    for (const point of shed) this.leftovers.add(point.id);
    if (shed.length)
      this.deps.logger.warn(
        { points: shed.map((p) => ({ code: p.code, shedAt: iso(p.shedAt) })), now: iso(now) },
        'load shedding: points left shed by an earlier run are restored once their minimum off time has passed',
      );
    return shed.map((p) => p.code);
  }

  /** No evaluation from now on (the service is stopping); safety runs still go. */
  stop(): void {
    this.stopped = true;
  }

  /** Raises the critical alert for a point still shed when the service gives up on it (the stop's time ran out). */
  reportStillShed(now: number, error: string): string[] {
    const shed = this.deps.config.points().filter((p) => p.shedAt !== null);
    for (const point of shed) {
      // Its error recorded too: the restore that goes through later (at the next start) clears the alert.
      this.markError.run({ error, at: now, notBefore: null, id: point.id });
      this.report(point, 'restore', point.restoreValue, error, now);
    }
    return shed.map((p) => p.code);
  }

  private async exclusive(run: () => Promise<LoadShedAction[]>): Promise<LoadShedAction[]> {
    const running = run().catch((error: unknown) => {
      this.deps.logger.error({ err: error }, 'load shedding evaluation failed');
      return [] as LoadShedAction[];
    });
    this.busy = running;
    try {
      return await running;
    } finally {
      if (this.busy === running) this.busy = null;
    }
  }

  /** How long a point has been shed: the longer of the wall clock's and the monotonic clock's count. */
  private shedForMs(point: PointRow, now: number): number {
    const since = this.shedSince.get(point.id);
    return Math.max(now - point.shedAt!, since === undefined ? 0 : this.monotonic() - since);
  }

  /**
   * A stored time ahead of the clock (beyond the tolerance) is a clock step back: shed time and window clamped to now,
   * the rest to now + the minimum off time, and logged. The monotonic count of a point shed in this process goes on.
   */
  private clampClockStep(now: number, settings: LoadShedSettings, points: PointRow[]): PointRow[] {
    const windowStart = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    const minOffMs = settings.minOffSec * 1000;
    return points.map((point) => {
      const shedAt = point.shedAt !== null && point.shedAt > now + CLOCK_STEP_TOLERANCE_MS ? now : point.shedAt;
      const shedWindow = point.shedWindow !== null && point.shedWindow > windowStart + CLOCK_STEP_TOLERANCE_MS ? windowStart : point.shedWindow;
      const notBefore =
        point.notBefore !== null && point.notBefore > now + Math.max(minOffMs, INTERVAL_MS) + CLOCK_STEP_TOLERANCE_MS ? now + minOffMs : point.notBefore;
      if (shedAt === point.shedAt && shedWindow === point.shedWindow && notBefore === point.notBefore) return point;
      this.clamp.run({ id: point.id, shedAt, shedWindow, notBefore });
      this.deps.logger.warn(
        { code: point.code, now: iso(now), shedAt: iso(point.shedAt), shedWindow: iso(point.shedWindow), notBefore: iso(point.notBefore) },
        'the clock stepped back: load-shedding times ahead of now clamped to now',
      );
      return { ...point, shedAt, shedWindow, notBefore };
    });
  }

  private async safety(now: number, all?: string): Promise<LoadShedAction[]> {
    const { config, tariffs, timezone } = this.deps;
    const settings = config.settings();
    const points = this.clampClockStep(now, settings, config.points());
    const shed = points.filter((p) => p.shedAt !== null);
    for (const id of this.shedSince.keys()) if (!shed.some((p) => p.id === id)) this.shedSince.delete(id);
    // First seen shed (at start, or shed by another controller): counted from its stored age, never from the future.
    for (const point of shed) if (!this.shedSince.has(point.id)) this.shedSince.set(point.id, this.monotonic() - Math.max(0, now - point.shedAt!));
    const minOffMs = settings.minOffSec * 1000;
    const windowStart = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    let contract: number | null | undefined;
    const noContract = () => (contract ??= tariffs.versionOn(dayOf(timezone(), now)).contractedPeakKw) === null;
    const due: { point: PointRow; reason: string; notBefore: number | null }[] = [];
    for (const point of shed) {
      const shedFor = this.shedForMs(point, now);
      const rested = shedFor >= minOffMs;
      if (all) due.push({ point, reason: all, notBefore: null });
      else if (shedFor >= settings.maxShedSec * 1000)
        due.push({ point, reason: `shed for the maximum of ${settings.maxShedSec} s`, notBefore: now + minOffMs });
      else if (!settings.enabled) due.push({ point, reason: 'load shedding disabled', notBefore: null });
      else if (this.leftovers.has(point.id) && rested) due.push({ point, reason: 'left shed by an earlier run of the service', notBefore: null });
      else if (point.lastError !== null && rested) due.push({ point, reason: 'the restore the gateway did not confirm, tried again', notBefore: null });
      else if (point.shedWindow! < windowStart && rested && noContract()) due.push({ point, reason: 'no contracted peak in effect', notBefore: null });
    }
    due.sort((a, b) => b.point.priority - a.point.priority || b.point.id - a.point.id);
    const actions: LoadShedAction[] = [];
    // A restore the gateway did not confirm waits its backoff before the next try, but at stop (`all`), where it is the last.
    for (const { point, reason, notBefore } of due) if (all || this.backoff.due(point.id)) actions.push(await this.restore(point, now, reason, notBefore));
    return actions;
  }

  private async step(now: number): Promise<LoadShedAction[]> {
    // The safety restores come first, whatever the projection: a point restored after its maximum rests a minimum off time.
    const restored = await this.safety(now);
    if (restored.length) return restored;
    const { config, tariffs, demand, timezone } = this.deps;
    const settings = config.settings();
    const points = config.points();
    const shed = points.filter((p) => p.shedAt !== null);
    if (!settings.enabled) return [];
    const minOffMs = settings.minOffSec * 1000;
    const windowStart = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    const limit = tariffs.versionOn(dayOf(timezone(), now)).contractedPeakKw;
    const projection = limit === null ? null : demand.projectedKw(now);
    // The peak warning's persistence rule (DemandWatch.sustainedAbove, INRUSH_MS): a start-up surge of up to three
    // minutes sheds nothing (issue 52); a window whose energy has passed the contract's share sheds at once.
    const sustained = limit === null ? null : demand.sustainedAbove(now);
    const over = sustained !== null && (sustained.persisted || sustained.crossed) && now - windowStart >= WARNING_MIN_ELAPSED_MS;
    if (over) {
      const next = points.find((p) => p.shedAt === null && (p.notBefore === null || p.notBefore <= now));
      if (!next) return [];
      return [await this.shed(next, now, windowStart, `projected ${round(projection!.projectedKw, 1)} kW above the contracted ${limit} kW`)];
    }
    // Back below: the last shed first, once its window is over and its minimum off time has passed.
    const calm = limit !== null && projection !== null && projection.projectedKw <= limit * RESTORE_BELOW_SHARE;
    if (!calm) return [];
    const due = shed.filter((p) => p.shedWindow! < windowStart && this.shedForMs(p, now) >= minOffMs).sort((a, b) => b.priority - a.priority || b.id - a.id);
    if (!due.length) return [];
    return [await this.restore(due[0], now, `projected ${round(projection!.projectedKw, 1)} kW, below ${RESTORE_BELOW_SHARE * 100} % of ${limit} kW`, null)];
  }

  private async shed(point: PointRow, now: number, windowStart: number, reason: string): Promise<LoadShedAction> {
    const outcome = await this.writeConfirmed(point.code, point.shedValue);
    this.record(point, 'shed', point.shedValue, outcome, reason);
    if (outcome.confirmed) {
      this.markShed.run({ shedAt: now, shedWindow: windowStart, id: point.id });
      this.shedSince.set(point.id, this.monotonic());
      this.backoff.clear(point.id);
      this.deps.logger.warn({ code: point.code, value: point.shedValue, reason }, 'load shed');
    } else {
      // Not counted as shed; not tried again in this window (the next point is, at the next collection).
      this.markError.run({ error: outcome.error, at: now, notBefore: windowStart + INTERVAL_MS, id: point.id });
      this.report(point, 'shed', point.shedValue, outcome.error!, now);
    }
    return { code: point.code, action: 'shed', confirmed: outcome.confirmed, reason };
  }

  private async restore(point: PointRow, now: number, reason: string, notBefore: number | null): Promise<LoadShedAction> {
    const outcome = await this.writeConfirmed(point.code, point.restoreValue);
    this.record(point, 'restore', point.restoreValue, outcome, reason);
    if (outcome.confirmed) {
      this.markRestored.run({ notBefore, id: point.id });
      this.shedSince.delete(point.id);
      this.leftovers.delete(point.id);
      this.backoff.clear(point.id);
      this.deps.logger.warn({ code: point.code, value: point.restoreValue, reason }, 'load restored');
      if (point.lastError !== null) this.clearRestoreAlert(point, now);
    } else {
      // Still shed: the restore is tried again by the guard, after a wait that doubles up to a minute.
      this.markError.run({ error: outcome.error, at: now, notBefore: null, id: point.id });
      this.report(point, 'restore', point.restoreValue, outcome.error!, now, this.backoff.failed(point.id));
    }
    return { code: point.code, action: 'restore', confirmed: outcome.confirmed, reason };
  }

  /** Writes through the gateway's set call, then reads the point back: confirmed only when it holds the value written. */
  private async writeConfirmed(code: string, value: number): Promise<{ confirmed: boolean; status: number | null; readBack: unknown; error: string | null }> {
    let status: number | null = null;
    let readBack: unknown = null;
    try {
      const answer = await this.deps.iot.set(code, value);
      status = answer.status;
      if (answer.status !== 200) return { confirmed: false, status, readBack, error: `the gateway answered ${answer.status} to the write` };
      // A read that is refused or malformed throws (GatewayRefused, BadGateway): not confirmed, with its reason.
      const row = (await this.deps.iot.values([code])).find((r) => r.code === code);
      readBack = row?.value ?? null;
      const number = typeof readBack === 'boolean' ? Number(readBack) : readBack;
      if (typeof number !== 'number' || Math.abs(number - value) > READ_BACK_TOLERANCE) {
        return { confirmed: false, status, readBack, error: `read back ${JSON.stringify(readBack)} after writing ${value}` };
      }
      return { confirmed: true, status, readBack, error: null };
    } catch (error) {
      return { confirmed: false, status, readBack, error: error instanceof Error ? error.message : String(error) };
    }
  }

  private record(
    point: PointRow,
    action: 'shed' | 'restore',
    value: number,
    outcome: { confirmed: boolean; status: number | null; readBack: unknown; error: string | null },
    reason: string,
  ): void {
    this.deps.audit.record({
      actor: null,
      action: `load_shedding.${action}`,
      resource: 'iot_point',
      resourceId: point.code,
      after: {
        value,
        reason,
        status: outcome.status,
        readBack: outcome.readBack,
        confirmed: outcome.confirmed,
        ...(outcome.error ? { error: outcome.error } : {}),
      },
    });
  }

  private report(point: PointRow, action: 'shed' | 'restore', value: number, error: string, now: number, retryInMs?: number): void {
    this.deps.logger.error({ code: point.code, value, action, error, retryInMs }, 'load shedding write not confirmed by the gateway');
    const at = new Date(now).toISOString();
    if (action === 'restore') {
      // Critical, one per point while it fails (an open occurrence with the same title is that one), cleared by the restore.
      this.deps.alerts.fromGatewayAlarm({
        key: `${RESTORE_FAILED_CODE}@${point.code}@${at}`,
        code: RESTORE_FAILED_CODE,
        level: 'critical',
        message: restoreFailedTitle(point),
        detail: `${error}. The point is still shed (it should hold ${value}); the restore is tried again, at most a minute apart. Check the gateway, or set the point by hand.`,
        raisedAt: at,
        clearedAt: null,
      });
      return;
    }
    this.deps.alerts.fromGatewayAlarm({
      key: `${UNCONFIRMED_CODE}@${point.code}@${at}`,
      code: UNCONFIRMED_CODE,
      level: 'warning',
      message: `Load shedding could not ${action} ${point.code}: the gateway did not confirm the write of ${value}`,
      detail: `${error}. The point is not counted as shed; the next point in priority order is tried.`,
      raisedAt: at,
      clearedAt: null,
    });
  }

  private clearRestoreAlert(point: PointRow, now: number): void {
    const at = new Date(now).toISOString();
    this.deps.alerts.fromGatewayAlarm({
      key: `${RESTORE_FAILED_CODE}@${point.code}@cleared@${at}`,
      code: RESTORE_FAILED_CODE,
      level: 'critical',
      message: restoreFailedTitle(point),
      raisedAt: at,
      clearedAt: at,
    });
  }
}

const restoreFailedTitle = (point: { code: string; restoreValue: number }) =>
  `Load shedding could not switch ${point.code} back on (restore to ${point.restoreValue} not confirmed)`;
