// Data problems reach people: after each collection, good or not, the collector's state is held against three rules and
// each problem is one alert through the alert pipeline (mail and escalation as for any alert), cleared by itself when the
// problem ends: the collection failing for COLLECTION_FAILURES intervals, a meter silent for SILENT_INTERVALS intervals,
// a meter whose readings are refused. No flapping (src/metering/dataAlertDamping.ts): cleared only after a hold-off,
// reopened when back soon after, and a cap on new alerts per meter an hour.
import type { AlertService } from '../facility/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Logger } from '../platform/logger.ts';
import type { Collector } from './collector.ts';
import { DataAlertDamping } from './dataAlertDamping.ts';
import type { SuspectRuns } from './suspectRuns.ts';

/** Alert sources (alarm keys are `<source>@<raised at>`). */
export const COLLECTION_CODE = 'energy.collection';
const meterPrefix = (meterId: number) => `energy.meter.${meterId}.`;
const meterCode = (meterId: number, problem: 'silent' | 'refused' | `suspect.${number}`) => `${meterPrefix(meterId)}${problem}`;
/** How often the collector's watch looks for suspect runs (each new 15-minute interval, not each collection). */
export const SUSPECT_SCAN_MS = 15 * 60_000;
/** Open suspect runs held as problems (newest first): an older one someone left unconfirmed is not asked after every collection. */
const SUSPECT_PROBLEMS = 200;

type Problem = { level: 'warning' | 'critical'; message: string; detail: string };
/** Failed collections in a row before anyone is told (a single gateway hiccup is not news). */
export const COLLECTION_FAILURES = 3;
/** Intervals without a counted reading before a meter counts as silent. */
export const SILENT_INTERVALS = 5;
/**
 * Meters silent at once that are one problem, not one per meter (issue 56): at least this many and at least half of
 * the meters read. An outage the collection alert did not cover (garbage answers, a gap the first good collections
 * are still filling) raised ~490 alerts within a second at 500 meters; it is one alert, `energy.meters.silent`.
 */
export const SILENT_TOGETHER_MIN = 3;
export const SILENT_TOGETHER_CODE = 'energy.meters.silent';

export class DataWatch {
  private readonly meterNames;
  private readonly damping: DataAlertDamping;

  constructor(
    private readonly deps: {
      db: Db;
      collector: Pick<Collector, 'health' | 'meterHealth' | 'intervalMs'>;
      alerts: Pick<AlertService, 'fromGatewayAlarm' | 'reopenCleared' | 'openAlarmKeys' | 'lastAlarmOf' | 'raisedSince'>;
      logger: Logger;
      /** Suspect runs (issue 52): the watch looks for them every SUSPECT_SCAN_MS; each open one is one alert. */
      suspects?: Pick<SuspectRuns, 'scan' | 'all'>;
    },
  ) {
    // raw SQL: every meter's name by id, as plain rows, for the alert titles
    this.meterNames = deps.db.sqlite.prepare('SELECT id, name FROM meters');
    this.damping = new DataAlertDamping(deps.alerts);
  }

  private lastSuspectScan = -Infinity;

  /**
   * Each open (unconfirmed) suspect run is a problem of its own, `energy.meter.<id>.suspect.<run>`: one alert per run,
   * present until the run is confirmed (then cleared after the hold-off) or its alert resolved by a person (the data stay
   * suspect; no new alert).
   */
  private suspectProblems(problems: Map<string, Problem>): void {
    for (const run of this.deps.suspects?.all({ open: true, limit: SUSPECT_PROBLEMS }) ?? []) {
      const code = meterCode(run.meterId, `suspect.${run.id}`);
      if (this.deps.alerts.lastAlarmOf(code)?.status === 'resolved') continue;
      const hours = run.hours >= 48 ? `${Math.round(run.hours / 24)} days` : `${run.hours} h`;
      problems.set(code, {
        level: 'warning',
        message: `Meter "${run.meterName}": the same value (${run.value}) for ${hours} from ${run.startAt} (suspect)`,
        detail:
          `${run.intervals} intervals in a row of ${run.value} from ${run.startAt} to ${run.endAt} (${run.source === 'import' ? 'history import' : 'collector'}), ` +
          'where the week before read more: a dead meter or logger? Its intervals are kept out of baselines, anomaly models and EnPIs. ' +
          `If the building was really closed, confirm the run (POST /api/energy/suspect-runs/${run.id}/confirm): they then count as measured.`,
      });
    }
  }

  /** Raises the alerts of suspect runs found outside a collection (a history import): no problem is cleared here. */
  suspectsFound(now: number): number {
    const problems = new Map<string, Problem>();
    this.suspectProblems(problems);
    return this.raise(problems, now);
  }

  /** Raises what is wrong and not yet raised, clears what is no longer wrong; answers how many of each. */
  check(now: number): { raised: number; cleared: number } {
    const at = new Date(now).toISOString();
    const interval = Math.max(this.deps.collector.intervalMs, 60_000);
    const health = this.deps.collector.health();
    const problems = new Map<string, Problem>();
    if (health.state === 'failing' && health.consecutiveFailures >= COLLECTION_FAILURES) {
      problems.set(COLLECTION_CODE, {
        level: 'critical',
        message: `Energy collection failing since ${health.failingSince}`,
        detail: `${health.consecutiveFailures} collections in a row failed (last error: ${health.lastError ?? '-'}). Energy figures stop at ${health.lastOkAt ?? 'the start'}; the gap is filled from the gateway history when it works again.`,
      });
    }
    const names = new Map((this.meterNames.all() as { id: number; name: string }[]).map((row) => [row.id, row.name]));
    const meters = this.deps.collector.meterHealth();
    const silent: { code: string; meterId: number; name: string; lastReadingAt: string; lagSec: number }[] = [];
    for (const meter of meters) {
      const name = names.get(meter.meterId) ?? meter.code;
      if (meter.state === 'refusing' && meter.lastRefusal) {
        problems.set(meterCode(meter.meterId, 'refused'), {
          level: 'warning',
          message: `Meter "${name}": readings refused`,
          detail: `The last reading of ${meter.code} was refused (${meter.lastRefusal.reason}; reading time ${meter.lastRefusal.readingAt ?? 'unreadable'}). It counts for nothing until good readings arrive.`,
        });
      }
      // A failing collection is one alert, not one per meter.
      if (health.state !== 'failing' && meter.lastReadingAt !== null && meter.lagSec !== null && meter.lagSec * 1000 > SILENT_INTERVALS * interval) {
        silent.push({ code: meter.code, meterId: meter.meterId, name, lastReadingAt: meter.lastReadingAt, lagSec: meter.lagSec });
      }
    }
    const read = meters.filter((meter) => meter.lastReadingAt !== null).length;
    if (silent.length >= SILENT_TOGETHER_MIN && silent.length * 2 >= read) {
      // Many meters at once: the gateway or the collection, not the meters. One alert; the meters' own alerts open
      // before it (if any) clear as usual.
      const since = silent.map((meter) => meter.lastReadingAt).sort()[0];
      problems.set(SILENT_TOGETHER_CODE, {
        level: 'warning',
        message: `${silent.length} of ${read} meters silent since ${since}`,
        detail: `No reading of ${silent.length} meters has counted for ${Math.round(Math.max(...silent.map((meter) => meter.lagSec)) / 60)} min (${silent
          .slice(0, 10)
          .map((meter) => meter.name)
          .join(', ')}${silent.length > 10 ? ', …' : ''}); their intervals since are missing. Many meters at once: look at the gateway first.`,
      });
    } else
      for (const meter of silent)
        problems.set(meterCode(meter.meterId, 'silent'), {
          level: 'warning',
          message: `Meter "${meter.name}" silent since ${meter.lastReadingAt}`,
          detail: `No reading of ${meter.code} has counted for ${Math.round(meter.lagSec / 60)} min; its intervals since are missing.`,
        });
    if (this.deps.suspects && now - this.lastSuspectScan >= SUSPECT_SCAN_MS) {
      this.lastSuspectScan = now;
      this.deps.suspects.scan(now);
    }
    this.suspectProblems(problems);
    const raised = this.raise(problems, now);
    let cleared = 0;
    for (const [code, key] of this.openKeys()) {
      if (problems.has(code) || !this.damping.clearDue(code, now)) continue;
      const result = this.deps.alerts.fromGatewayAlarm({ key, code, level: 'warning', message: '', raisedAt: key.slice(code.length + 1), clearedAt: at });
      if (result === 'cleared') {
        cleared += 1;
        this.deps.logger.info({ code }, 'energy data problem over: alert cleared');
      }
    }
    return { raised, cleared };
  }

  /** The open data-problem alerts by code (episodes still open after a restart keep their keys: the same alert, not a second one). */
  private openKeys(): Map<string, string> {
    return new Map(this.deps.alerts.openAlarmKeys('energy.').map((key) => [key.slice(0, key.indexOf('@')), key]));
  }

  /** Raises each problem not already open (or reopens its alert cleared a moment ago), within the per-meter cap. */
  private raise(problems: Map<string, Problem>, now: number): number {
    const at = new Date(now).toISOString();
    const open = this.openKeys();
    let raised = 0;
    for (const [code, problem] of problems) {
      this.damping.present(code);
      if (open.has(code)) continue;
      const reopen = this.damping.reopenable(code, now);
      if (reopen) {
        this.deps.alerts.reopenCleared(reopen.id);
        this.deps.logger.warn({ code, alert: reopen.id }, `${problem.message} (again: its alert reopened)`);
        continue;
      }
      const meter = /^energy\.meter\.\d+\./.exec(code)?.[0];
      if (
        meter &&
        !this.damping.mayRaise(meter, now, (raisedInHour) =>
          this.deps.logger.warn({ code, raisedInHour }, 'energy data-problem alerts for this meter capped: no new alert for the rest of the hour'),
        )
      )
        continue;
      this.deps.logger.warn({ code }, problem.message);
      if (
        this.deps.alerts.fromGatewayAlarm({
          key: `${code}@${at}`,
          code,
          level: problem.level,
          message: problem.message,
          detail: problem.detail,
          raisedAt: at,
          clearedAt: null,
        }) === 'raised'
      )
        raised += 1;
    }
    return raised;
  }
}
