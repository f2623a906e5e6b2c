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

/** Alert sources (alarm keys are `<source>@<raised at>`). */
export const COLLECTION_CODE = 'energy.collection';
const meterPrefix = (meterId: number) => `energy.meter.${meterId}.`;
const meterCode = (meterId: number, problem: 'silent' | 'refused') => `${meterPrefix(meterId)}${problem}`;
/** Failed collections in a row before anyone is told (a single gateway hiccup is not news). */
export const COLLECTION_FAILURES = 3;
/** Intervals without a counted reading before a meter counts as silent. */
export const SILENT_INTERVALS = 5;

export class DataWatch {
  private readonly meterNames;
  private readonly damping: DataAlertDamping;

  constructor(
    private readonly deps: {
      db: Db;
      collector: Pick<Collector, 'health' | 'meterHealth' | 'intervalMs'>;
      alerts: Pick<AlertService, 'fromGatewayAlarm' | 'reopenCleared' | 'openAlarmKeys' | 'lastAlarmOf' | 'raisedSince'>;
      logger: Logger;
    },
  ) {
    // raw SQL: every meter's name by id, as plain rows, for the alert titles
    this.meterNames = deps.db.sqlite.prepare('SELECT id, name FROM meters');
    this.damping = new DataAlertDamping(deps.alerts);
  }

  /** Raises what is wrong and not yet raised, clears what is no longer wrong; answers how many of each. */
  check(now: number): { raised: number; cleared: number } {
    const at = new Date(now).toISOString();
    const interval = Math.max(this.deps.collector.intervalMs, 60_000);
    const health = this.deps.collector.health();
    const problems = new Map<string, { level: 'warning' | 'critical'; message: string; detail: string }>();
    if (health.state === 'failing' && health.consecutiveFailures >= COLLECTION_FAILURES) {
      problems.set(COLLECTION_CODE, {
        level: 'critical',
        message: `Energy collection failing since ${health.failingSince}`,
        detail: `${health.consecutiveFailures} collections in a row failed (last error: ${health.lastError ?? '-'}). Energy figures stop at ${health.lastOkAt ?? 'the start'}; the gap is filled from the gateway history when it works again.`,
      });
    }
    const names = new Map((this.meterNames.all() as { id: number; name: string }[]).map((row) => [row.id, row.name]));
    for (const meter of this.deps.collector.meterHealth()) {
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
        problems.set(meterCode(meter.meterId, 'silent'), {
          level: 'warning',
          message: `Meter "${name}" silent since ${meter.lastReadingAt}`,
          detail: `No reading of ${meter.code} has counted for ${Math.round(meter.lagSec / 60)} min; its intervals since are missing.`,
        });
      }
    }
    // Episodes still open after a restart keep their keys: the same alert, not a second one.
    const open = new Map(this.deps.alerts.openAlarmKeys('energy.').map((key) => [key.slice(0, key.indexOf('@')), key]));
    let raised = 0;
    let cleared = 0;
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
    for (const [code, key] of open) {
      if (problems.has(code) || !this.damping.clearDue(code, now)) continue;
      const result = this.deps.alerts.fromGatewayAlarm({ key, code, level: 'warning', message: '', raisedAt: key.slice(code.length + 1), clearedAt: at });
      if (result === 'cleared') {
        cleared += 1;
        this.deps.logger.info({ code }, 'energy data problem over: alert cleared');
      }
    }
    return { raised, cleared };
  }
}
