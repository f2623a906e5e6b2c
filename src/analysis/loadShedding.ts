// Load shedding (optional, off by default, admin-only): when the peak warning's projection of the running 15-minute
// window passes the contracted peak, gateway points are written to their shed values, lowest priority number first,
// one per collection while the projection stays above; they are restored (last shed first, one per collection) once
// their window is over and the projection is back below 95 % of the contract, never before their minimum off time,
// and always after their maximum shed duration. Every write is audited; a write the gateway cannot confirm (an error,
// a refusal, or a read-back that differs) is reported as an alert and the point is not counted as shed.
import type { AlertService } from '../facility/alerts/service.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import type { DemandWatch } from '../energy/demandWatch.ts';
import { WARNING_MIN_ELAPSED_MS } from '../energy/demandWatch.ts';
import type { Tariffs } from '../pricing/tariffs.ts';
import { BadRequest, Conflict } from '../platform/errors.ts';
import type { IotGateway } from '../gateway/service.ts';
import type { Logger } from '../platform/logger.ts';

export const UNCONFIRMED_CODE = 'energy.load_shedding.unconfirmed';
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
  private readonly writeSettings;
  private readonly readPoints;
  private readonly insertPoint;
  private readonly updatePoint;
  private readonly deletePoint;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
  ) {
    const sqlite = db.sqlite;
    this.readSettings = sqlite.prepare('SELECT enabled, min_off_sec AS minOffSec, max_shed_sec AS maxShedSec FROM load_shed_settings WHERE id = 1');
    this.writeSettings = sqlite.prepare('UPDATE load_shed_settings SET enabled = @enabled, min_off_sec = @minOffSec, max_shed_sec = @maxShedSec WHERE id = 1');
    this.readPoints = sqlite.prepare(
      `SELECT id, code, priority, shed_value AS shedValue, restore_value AS restoreValue, shed_at AS shedAt, shed_window AS shedWindow, not_before AS notBefore,
       last_error AS lastError, last_error_at AS lastErrorAt FROM load_shed_points ORDER BY priority, id`,
    );
    this.insertPoint = sqlite.prepare(
      'INSERT INTO load_shed_points (code, priority, shed_value, restore_value) VALUES (@code, @priority, @shedValue, @restoreValue)',
    );
    this.updatePoint = sqlite.prepare(
      'UPDATE load_shed_points SET priority = @priority, shed_value = @shedValue, restore_value = @restoreValue WHERE code = @code',
    );
    this.deletePoint = sqlite.prepare('DELETE FROM load_shed_points WHERE code = ?');
  }

  settings(): LoadShedSettings {
    const row = this.readSettings.get() as { enabled: number; minOffSec: number; maxShedSec: number };
    return { enabled: row.enabled === 1, minOffSec: row.minOffSec, maxShedSec: row.maxShedSec };
  }

  points(): PointRow[] {
    return this.readPoints.all() as PointRow[];
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
        this.deletePoint.run(point.code);
      }
      for (const point of input.points) {
        if (existing.some((e) => e.code === point.code)) this.updatePoint.run(point);
        else this.insertPoint.run(point);
      }
      this.writeSettings.run({ enabled: input.enabled ? 1 : 0, minOffSec: input.minOffSec, maxShedSec: input.maxShedSec });
      const after = this.view();
      this.audit.record({ actor, action: 'replace', resource: 'load_shedding', before, after });
      return after;
    })();
  }
}

/** The controller: one evaluation after each collection (the service's collector calls it; never two at once). */
export class LoadShedder {
  private running = false;
  private readonly markShed;
  private readonly markRestored;
  private readonly markError;

  constructor(
    private readonly deps: {
      db: Db;
      audit: AuditLog;
      config: LoadSheddingConfig;
      iot: Pick<IotGateway, 'relay'>;
      demand: Pick<DemandWatch, 'projectedKw'>;
      tariffs: Tariffs;
      alerts: Pick<AlertService, 'fromGatewayAlarm'>;
      logger: Logger;
      timezone: () => string;
    },
  ) {
    const sqlite = deps.db.sqlite;
    this.markShed = sqlite.prepare('UPDATE load_shed_points SET shed_at = ?, shed_window = ?, last_error = NULL, last_error_at = NULL WHERE id = ?');
    this.markRestored = sqlite.prepare(
      'UPDATE load_shed_points SET shed_at = NULL, shed_window = NULL, not_before = ?, last_error = NULL, last_error_at = NULL WHERE id = ?',
    );
    this.markError = sqlite.prepare('UPDATE load_shed_points SET last_error = ?, last_error_at = ?, not_before = coalesce(?, not_before) WHERE id = ?');
  }

  /** What this evaluation wrote; nothing while another evaluation is still running. */
  async evaluate(now: number): Promise<LoadShedAction[]> {
    if (this.running) return [];
    this.running = true;
    try {
      return await this.step(now);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'load shedding evaluation failed');
      return [];
    } finally {
      this.running = false;
    }
  }

  private async step(now: number): Promise<LoadShedAction[]> {
    const { config, tariffs, demand, timezone } = this.deps;
    const settings = config.settings();
    const points = config.points();
    const shed = points.filter((p) => p.shedAt !== null);
    if (!settings.enabled && !shed.length) return [];
    const actions: LoadShedAction[] = [];
    const minOffMs = settings.minOffSec * 1000;
    // The maximum shed duration comes first, whatever the projection: the point rests a minimum off time before it may be shed again.
    for (const point of shed) {
      if (now - point.shedAt! >= settings.maxShedSec * 1000)
        actions.push(await this.restore(point, now, `shed for the maximum of ${settings.maxShedSec} s`, now + minOffMs));
    }
    if (actions.length) return actions;
    const windowStart = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    const limit = settings.enabled ? tariffs.versionOn(dayOf(timezone(), now)).contractedPeakKw : null;
    const projection = limit === null ? null : demand.projectedKw(now);
    const over = limit !== null && projection !== null && now - windowStart >= WARNING_MIN_ELAPSED_MS && projection.projectedKw > limit;
    if (over) {
      const next = points.find((p) => p.shedAt === null && (p.notBefore === null || p.notBefore <= now));
      if (!next) return [];
      return [await this.shed(next, now, windowStart, `projected ${round(projection!.projectedKw)} kW above the contracted ${limit} kW`)];
    }
    // Back below (or disabled, or no contract): the last shed first, once its window is over and its minimum off time has passed.
    const calm = limit === null || (projection !== null && projection.projectedKw <= limit * RESTORE_BELOW_SHARE);
    if (!calm) return [];
    const due = shed.filter((p) => p.shedWindow! < windowStart && now - p.shedAt! >= minOffMs).sort((a, b) => b.priority - a.priority || b.id - a.id);
    if (!due.length) return [];
    const reason = !settings.enabled
      ? 'load shedding disabled'
      : limit === null
        ? 'no contracted peak in effect'
        : `projected ${round(projection!.projectedKw)} kW, below ${RESTORE_BELOW_SHARE * 100} % of ${limit} kW`;
    return [await this.restore(due[0], now, reason, null)];
  }

  private async shed(point: PointRow, now: number, windowStart: number, reason: string): Promise<LoadShedAction> {
    const outcome = await this.writeConfirmed(point.code, point.shedValue);
    this.record(point, 'shed', point.shedValue, outcome, reason);
    if (outcome.confirmed) {
      this.markShed.run(now, windowStart, point.id);
      this.deps.logger.warn({ code: point.code, value: point.shedValue, reason }, 'load shed');
    } else {
      // Not counted as shed; not tried again in this window (the next point is, at the next collection).
      this.markError.run(outcome.error, now, windowStart + INTERVAL_MS, point.id);
      this.report(point, 'shed', point.shedValue, outcome.error!, now);
    }
    return { code: point.code, action: 'shed', confirmed: outcome.confirmed, reason };
  }

  private async restore(point: PointRow, now: number, reason: string, notBefore: number | null): Promise<LoadShedAction> {
    const outcome = await this.writeConfirmed(point.code, point.restoreValue);
    this.record(point, 'restore', point.restoreValue, outcome, reason);
    if (outcome.confirmed) {
      this.markRestored.run(notBefore, point.id);
      this.deps.logger.warn({ code: point.code, value: point.restoreValue, reason }, 'load restored');
    } else {
      // Still shed: the restore is tried again at the next collection.
      this.markError.run(outcome.error, now, null, point.id);
      this.report(point, 'restore', point.restoreValue, outcome.error!, now);
    }
    return { code: point.code, action: 'restore', confirmed: outcome.confirmed, reason };
  }

  /** Writes through the gateway's set call, then reads the point back: confirmed only when it holds the value written. */
  private async writeConfirmed(code: string, value: number): Promise<{ confirmed: boolean; status: number | null; readBack: unknown; error: string | null }> {
    let status: number | null = null;
    let readBack: unknown = null;
    try {
      const answer = await this.deps.iot.relay('POST', '/codes/set', { body: { code, value } });
      status = answer.status;
      if (answer.status !== 200) return { confirmed: false, status, readBack, error: `the gateway answered ${answer.status} to the write` };
      const read = await this.deps.iot.relay('POST', '/codes/values', { body: { codes: [code] } });
      const row = (read.json as { data?: { code?: unknown; value?: unknown }[] } | undefined)?.data?.find((r) => r?.code === code);
      readBack = row?.value ?? null;
      const number = typeof readBack === 'boolean' ? Number(readBack) : readBack;
      if (read.status !== 200 || typeof number !== 'number' || Math.abs(number - value) > READ_BACK_TOLERANCE) {
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

  private report(point: PointRow, action: 'shed' | 'restore', value: number, error: string, now: number): void {
    this.deps.logger.error({ code: point.code, value, action, error }, 'load shedding write not confirmed by the gateway');
    const at = new Date(now).toISOString();
    this.deps.alerts.fromGatewayAlarm({
      key: `${UNCONFIRMED_CODE}@${point.code}@${at}`,
      code: UNCONFIRMED_CODE,
      level: 'warning',
      message: `Load shedding could not ${action} ${point.code}: the gateway did not confirm the write of ${value}`,
      detail: `${error}. ${action === 'shed' ? 'The point is not counted as shed; the next point in priority order is tried.' : 'The point is still counted as shed; the restore is tried again at the next collection.'}`,
      raisedAt: at,
      clearedAt: null,
    });
  }
}

const round = (value: number) => Math.round(value * 10) / 10;
