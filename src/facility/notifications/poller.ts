// Pulls the gateway's alarms into alerts on a fixed cadence: one alert per alarm occurrence, clearing seen, no duplicates.
import type { AlarmRow, GatewayPort } from '../../gateway/index.ts';
import type { AlertService, GatewayAlarm } from '../alerts/service.ts';
import type { Job } from '../../platform/jobs/jobs.ts';
import { Repeating } from '../../platform/jobs/lifecycle.ts';
import type { Logger } from '../../platform/logger.ts';

/** How far back each poll looks: an alarm raised within it that clears later is still seen clearing. */
export const ALARM_LOOKBACK_MS = 7 * 24 * 3600_000;
const PAGE_SIZE = 200;
/** A burst larger than this in one lookback is read in part; the next polls read on (newest first). */
const MAX_PAGES = 25;

/** How long the gateway's point catalogue (its point names, read for alarms no mapping places) is used before it is read again. */
export const CATALOGUE_TTL_MS = 10 * 60_000;
/** A point name longer than this is not read as naming an area. */
const POINT_NAME_MAX = 200;

const LEVELS = new Set(['info', 'warning', 'critical']);

/**
 * Bounds on what a gateway may hand us. A code is an identity (it names the point and keys the occurrence), so a
 * longer one is refused rather than cut (two cut codes could merge); the message becomes the alert's title and is
 * cut. A 1 MiB code cost ~7.3 MB of database and made a search answer 62 MB.
 */
export const ALARM_CODE_MAX = 128;
export const ALARM_MESSAGE_MAX = 200;
/** Times before this are a gateway clock that lost its setting (year −271821 made its alert unreadable). */
export const ALARM_EARLIEST = Date.UTC(2000, 0, 1);
/** How far ahead of our clock a gateway's may run before its times are replaced by the time we saw the alarm. */
export const ALARM_CLOCK_SKEW_MS = 5 * 60_000;

export type Occurrence = { alarm: GatewayAlarm; clamped: boolean } | { refused: string };

function instant(value: unknown): number | null {
  if (typeof value !== 'string' || value.length > 40) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The gateway's alarm as an occurrence, or why it is refused (no code, a code over ALARM_CODE_MAX, no readable
 * time). A raisedAt or clearedAt outside [2000-01-01, now + 5 min] is replaced by `now` (`clamped`): a year-2999
 * alarm would top the wallboard forever. The key keeps the gateway's own text, so the same row is the same
 * occurrence on every poll.
 */
export function occurrenceOf(row: Partial<AlarmRow>, now: number): Occurrence {
  if (typeof row.code !== 'string' || row.code === '') return { refused: 'no code' };
  if (row.code.length > ALARM_CODE_MAX) return { refused: `a code of ${row.code.length} characters (at most ${ALARM_CODE_MAX})` };
  const raised = instant(row.raisedAt);
  if (raised === null) return { refused: 'no readable raisedAt' };
  const inRange = (ms: number) => ms >= ALARM_EARLIEST && ms <= now + ALARM_CLOCK_SKEW_MS;
  let clamped = false;
  const within = (ms: number) => {
    if (inRange(ms)) return ms;
    clamped = true;
    return now;
  };
  const raisedAt = new Date(within(raised)).toISOString();
  const cleared = row.clearedAt === null || row.clearedAt === undefined ? null : instant(row.clearedAt);
  const clearedAt = cleared === null ? null : new Date(Math.max(within(cleared), Date.parse(raisedAt))).toISOString();
  return {
    clamped,
    alarm: {
      // Code and the gateway's time identify an occurrence on any gateway, whatever its own ids do across its
      // restarts; a gateway whose raisedAt moves with its clock is matched by its open occurrence (AlertService).
      key: `${row.code}@${inRange(raised) ? raisedAt : String(row.raisedAt)}`,
      code: row.code,
      level: (LEVELS.has(row.level as string) ? row.level : 'warning') as GatewayAlarm['level'],
      message: typeof row.message === 'string' && row.message.trim() ? row.message.slice(0, ALARM_MESSAGE_MAX) : `Alarm on ${row.code}`,
      raisedAt,
      clearedAt,
    },
  };
}

export class AlarmPoller {
  private readonly repeating: Repeating;
  private failing = false;
  /** The gateway's point names by code, as last read (null: not read, or the gateway would not give them). */
  private catalogue: { at: number; names: Map<string, string> | null } | null = null;

  constructor(
    private readonly deps: {
      iot: Pick<GatewayPort, 'codes' | 'alarms'>;
      alerts: Pick<AlertService, 'fromGatewayAlarm'>;
      /** Where an alarm's alert is raised (facility/alarmAreas: AlarmAreas); without it, in no area. */
      areas?: { resolve(code: string, pointName?: string | null): { area: string | null } };
      logger: Logger;
      intervalMs: number;
      now?: () => number;
    },
  ) {
    this.repeating = new Repeating(() => this.poll(), deps.intervalMs, 'gateway alarm poll');
  }

  get job(): Job {
    return this.repeating;
  }

  start(): void {
    this.repeating.start();
  }

  stop(): Promise<void> {
    return this.repeating.stop();
  }

  /**
   * The area of an alarm on `code` (AlarmAreas.resolve): the admin's map, the meter of that code, else the point's name
   * in the gateway's catalogue (`GET {base}/codes`, read by the poll, at most once per CATALOGUE_TTL_MS). Called only
   * when the alarm raises a new alert.
   */
  private areaOf(code: string, names: Map<string, string> | null): string | null {
    const areas = this.deps.areas;
    if (!areas) return null;
    const placed = areas.resolve(code);
    if (placed.area !== null) return placed.area;
    const name = names?.get(code);
    return name ? areas.resolve(code, name).area : null;
  }

  /** The catalogue's names by code; a gateway that does not answer it leaves names out until the next read is due. */
  private async pointNames(now: number): Promise<Map<string, string> | null> {
    if (this.catalogue && now - this.catalogue.at < CATALOGUE_TTL_MS) return this.catalogue.names;
    let names: Map<string, string> | null = null;
    try {
      const catalogue = await this.deps.iot.codes();
      if (catalogue) {
        names = new Map();
        for (const row of catalogue) if (row.name !== null && row.name.length <= POINT_NAME_MAX) names.set(row.code, row.name);
      }
    } catch {
      // The alarm still becomes an alert, in no area; the poll's own reads report a gateway that is down.
    }
    this.catalogue = { at: now, names };
    return names;
  }

  /** One poll; never throws (a gateway that is down is logged once, and once when it answers again). */
  async poll(): Promise<{ raised: number; cleared: number }> {
    const counts = { raised: 0, cleared: 0 };
    const oddities: { refused: number; clamped: number; example?: string } = { refused: 0, clamped: 0 };
    const now = this.deps.now?.() ?? Date.now();
    const start = new Date(now - ALARM_LOOKBACK_MS).toISOString();
    try {
      for (let page = 1; page <= MAX_PAGES; page += 1) {
        const { rows, total } = await this.deps.iot.alarms({ start, page, pageSize: PAGE_SIZE });
        // Point names for alarms no mapping or meter places: one read of the catalogue, kept CATALOGUE_TTL_MS.
        const names = rows.length && this.deps.areas ? await this.pointNames(now) : null;
        for (const row of rows) {
          const occurrence = occurrenceOf(row, now);
          if ('refused' in occurrence) {
            oddities.refused += 1;
            oddities.example ??= occurrence.refused;
            continue;
          }
          if (occurrence.clamped) oddities.clamped += 1;
          const code = occurrence.alarm.code;
          const outcome = this.deps.alerts.fromGatewayAlarm({ ...occurrence.alarm, area: () => this.areaOf(code, names) });
          if (outcome === 'raised') counts.raised += 1;
          if (outcome === 'cleared') counts.cleared += 1;
        }
        if (rows.length < PAGE_SIZE || page * PAGE_SIZE >= total) break;
      }
      if (oddities.refused || oddities.clamped) {
        this.deps.logger.warn(
          { refused: oddities.refused, clamped: oddities.clamped, reason: oddities.example },
          'gateway alarms out of bounds: rows refused (no code, an over-long code, no time), times outside 2000-01-01 .. now+5min replaced by the time seen',
        );
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
