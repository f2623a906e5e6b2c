// Data-problem alerts that do not flap (issue 39, item 7): a meter whose gateway stamps one reading in three badly gave a
// new alert each time one good reading cleared the last (44 in 11 minutes at a 5 s interval). Three rules:
// - a problem is cleared only once it has been absent for CLEAR_AFTER_CHECKS checks in a row AND CLEAR_AFTER_MS;
// - a problem that comes back within REOPEN_WITHIN_MS of its alert being cleared reopens that alert (cleared time
//   emptied, the same alert, no new mail), unless someone resolved it meanwhile;
// - at most MAX_NEW_PER_METER_PER_HOUR new alerts per meter an hour (both meter problems together); beyond that the
//   problem is logged once, not raised.
import type { AlertService } from '../facility/index.ts';

/** Checks (collections) in a row a problem must be absent before its alert is cleared. */
export const CLEAR_AFTER_CHECKS = 3;
/** …and for at least this long (at the default 60 s interval, five collections). */
export const CLEAR_AFTER_MS = 5 * 60_000;
/** A problem back within this time of its alert being cleared reopens that alert. */
export const REOPEN_WITHIN_MS = 30 * 60_000;
/** New data-problem alerts one meter may raise in an hour. */
export const MAX_NEW_PER_METER_PER_HOUR = 3;
const HOUR = 3_600_000;

export class DataAlertDamping {
  /** Per problem code: since when and for how many checks it has been absent while its alert is still open. */
  private readonly absent = new Map<string, { since: number; checks: number }>();
  /** Per meter: until when the "capped" line has been logged (once an hour). */
  private readonly cappedLogged = new Map<string, number>();
  /** The alerts are facility's: the last one of a problem and the count raised lately are asked of AlertService. */
  constructor(private readonly alerts: Pick<AlertService, 'lastAlarmOf' | 'raisedSince'>) {}

  /** The problem is there (again): it resets its hold-off. */
  present(code: string): void {
    this.absent.delete(code);
  }

  /** The problem is absent at this check while its alert is open: true once the hold-off has passed (clear it now). */
  clearDue(code: string, now: number): boolean {
    const seen = this.absent.get(code) ?? { since: now, checks: 0 };
    seen.checks += 1;
    this.absent.set(code, seen);
    if (seen.checks >= CLEAR_AFTER_CHECKS && now - seen.since >= CLEAR_AFTER_MS - 1) {
      this.absent.delete(code);
      return true;
    }
    return false;
  }

  /** The alert a problem back soon after its clear reopens: its id and key, or null (raise a new one). */
  reopenable(code: string, now: number): { id: number; alarmKey: string } | null {
    const row = this.alerts.lastAlarmOf(code);
    if (!row || row.clearedAt === null || row.status === 'resolved') return null;
    return now - Date.parse(row.clearedAt) <= REOPEN_WITHIN_MS ? { id: row.id, alarmKey: row.alarmKey } : null;
  }

  /**
   * Whether one more new alert for this meter's problems fits in the hour; `onCapped` is called once an hour per meter
   * when it does not. `meterPrefix` is `energy.meter.<id>.`.
   */
  mayRaise(meterPrefix: string, now: number, onCapped: (raisedInHour: number) => void): boolean {
    const raised = this.alerts.raisedSince(meterPrefix, new Date(now - HOUR).toISOString());
    if (raised < MAX_NEW_PER_METER_PER_HOUR) return true;
    if ((this.cappedLogged.get(meterPrefix) ?? -Infinity) <= now) {
      this.cappedLogged.set(meterPrefix, now + HOUR);
      onCapped(raised);
    }
    return false;
  }
}
