// Pulls the gateway's alarms into alerts on a fixed cadence: one alert per alarm occurrence, clearing seen, no duplicates.
import type { AlertService, GatewayAlarm } from '../alerts/service.ts';
import type { IotGateway } from '../iot/service.ts';
import { Repeating } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';

/** How far back each poll looks: an alarm raised within it that clears later is still seen clearing. */
export const ALARM_LOOKBACK_MS = 7 * 24 * 3600_000;
const PAGE_SIZE = 200;
/** A burst larger than this in one lookback is read in part; the next polls read on (newest first). */
const MAX_PAGES = 25;

type GatewayAlarmRow = { id?: unknown; code?: unknown; level?: unknown; message?: unknown; raisedAt?: unknown; clearedAt?: unknown };

const LEVELS = new Set(['info', 'warning', 'critical']);

/** The gateway's alarm as an occurrence; null for a row without a code or a time (logged, skipped). */
export function occurrenceOf(row: GatewayAlarmRow): GatewayAlarm | null {
  if (typeof row.code !== 'string' || typeof row.raisedAt !== 'string' || !Number.isFinite(Date.parse(row.raisedAt))) return null;
  const raisedAt = new Date(row.raisedAt).toISOString();
  const clearedAt = typeof row.clearedAt === 'string' && Number.isFinite(Date.parse(row.clearedAt)) ? new Date(row.clearedAt).toISOString() : null;
  return {
    // Code and time identify an occurrence on any gateway, whatever its own ids do across its restarts.
    key: `${row.code}@${raisedAt}`,
    code: row.code,
    level: (LEVELS.has(row.level as string) ? row.level : 'warning') as GatewayAlarm['level'],
    message: typeof row.message === 'string' && row.message ? row.message.slice(0, 200) : `Alarm on ${row.code}`,
    raisedAt,
    clearedAt,
  };
}

export class AlarmPoller {
  private readonly repeating: Repeating;
  private failing = false;

  constructor(
    private readonly deps: { iot: Pick<IotGateway, 'relay'>; alerts: Pick<AlertService, 'fromGatewayAlarm'>; logger: Logger; intervalMs: number; now?: () => number },
  ) {
    this.repeating = new Repeating(() => this.poll(), deps.intervalMs);
  }

  start(): void {
    this.repeating.start();
  }

  stop(): Promise<void> {
    return this.repeating.stop();
  }

  /** One poll; never throws (a gateway that is down is logged once, and once when it answers again). */
  async poll(): Promise<{ raised: number; cleared: number }> {
    const counts = { raised: 0, cleared: 0 };
    const now = this.deps.now?.() ?? Date.now();
    const start = new Date(now - ALARM_LOOKBACK_MS).toISOString();
    try {
      for (let page = 1; page <= MAX_PAGES; page += 1) {
        const query = new URLSearchParams({ start, page: String(page), pageSize: String(PAGE_SIZE) }).toString();
        const answer = await this.deps.iot.relay('GET', '/alarms', { query });
        if (answer.status !== 200) throw new Error(`the gateway answered ${answer.status}`);
        const body = answer.json as { data?: unknown; total?: unknown };
        const rows = Array.isArray(body?.data) ? (body.data as GatewayAlarmRow[]) : [];
        for (const row of rows) {
          const occurrence = occurrenceOf(row);
          if (!occurrence) continue;
          const outcome = this.deps.alerts.fromGatewayAlarm(occurrence);
          if (outcome === 'raised') counts.raised += 1;
          if (outcome === 'cleared') counts.cleared += 1;
        }
        if (rows.length < PAGE_SIZE || page * PAGE_SIZE >= Number(body.total ?? 0)) break;
      }
      if (this.failing) this.deps.logger.warn('gateway alarms are read again');
      this.failing = false;
      if (counts.raised || counts.cleared) this.deps.logger.info(counts, 'gateway alarms turned into alerts');
    } catch (error) {
      if (!this.failing) this.deps.logger.warn({ err: { message: (error as Error).message } }, 'gateway alarms cannot be read; retrying every poll');
      this.failing = true;
    }
    return counts;
  }
}
