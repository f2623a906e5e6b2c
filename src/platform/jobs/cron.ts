// The one cron implementation: node-cron reads and validates expressions (report plans and the backup schedule);
// nextCronRun says when one fires in a time zone, with classic cron's daylight-saving rules, and CronTimer runs a task
// at those times. Report plans fire in the site's zone, the backup in the box's (docs/design-decisions.md, clock rule).
// node-cron's own scheduler is not used: on change days it skips a time the spring change removes and runs a time the
// autumn change repeats at its second occurrence (node-cron 4.6, measured), and it computes next runs only from now.
import fs from 'node:fs';
import cron from 'node-cron';
import { wallClock, zoneOffsetMs } from '../time/calendar.ts';
import { zoneRules } from '../time/zoneinfo.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;

const offsetAt = zoneOffsetMs;

type Fields = ReturnType<typeof cron.parse>;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** node-cron's day rules: day of month AND day of week (it does not OR them as Vixie cron does), with L and n#k forms. */
function dayMatches(fields: Fields, year: number, month: number, day: number): boolean {
  if (!fields.month.includes(month)) return false;
  const last = daysInMonth(year, month);
  const domOk = fields.dayOfMonth.some((value) => (value === 'L' ? day === last : Number(value) === day));
  if (!domOk) return false;
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  return fields.dayOfWeek.some((value) => {
    if (typeof value === 'number') return value % 7 === weekday;
    const nth = /^(\d)#(\d)$/.exec(value);
    if (nth) return Number(nth[1]) % 7 === weekday && Math.ceil(day / 7) === Number(nth[2]);
    const lastOf = /^(\d)L$/.exec(value);
    if (lastOf) return Number(lastOf[1]) % 7 === weekday && day + 7 > last;
    return Number(value) % 7 === weekday;
  });
}

/**
 * The first instant strictly after `after` (epoch ms) at which `expression` fires in `timezone`, or null if none
 * within five years. Daylight-saving changes follow classic cron: an expression with a fixed hour runs once on the
 * change days — a wall time the spring change skips runs at the moment of the change, a wall time the autumn change
 * repeats runs on its first occurrence only; an expression for every hour runs by elapsed time (each real hour).
 */
export function nextCronRun(expression: string, timezone: string, after: number): number | null {
  const fields = cron.parse(expression);
  const fixedHour = fields.hour.length < 24;
  const startWall = wallClock(timezone, after) - DAY;
  let date = new Date(startWall - (startWall % DAY));
  for (let index = 0; index < 5 * 366 + 2; index += 1, date = new Date(date.getTime() + DAY)) {
    const year = date.getUTCFullYear();
    const month = date.getUTCMonth() + 1;
    const day = date.getUTCDate();
    if (!dayMatches(fields, year, month, day)) continue;
    const dayStart = date.getTime();
    const dayEnd = dayStart + DAY;
    // Offsets at the day's local midnight and the next one; a change in between lies in [startInstant, endInstant].
    const offsetStart = offsetAt(timezone, dayStart - offsetAt(timezone, dayStart));
    const offsetEnd = offsetAt(timezone, dayEnd - offsetAt(timezone, dayEnd));
    if (dayEnd - offsetEnd <= after) continue;
    let change = Infinity;
    if (offsetStart !== offsetEnd) {
      let low = dayStart - offsetStart - 2 * 3_600_000;
      let high = dayEnd - offsetEnd + 2 * 3_600_000;
      while (high - low > 1000) {
        const middle = low + Math.floor((high - low) / 2);
        if (offsetAt(timezone, middle) === offsetStart) low = middle;
        else high = middle;
      }
      change = high - (high % 1000);
    }
    let best: number | null = null;
    for (const hour of fields.hour) {
      for (const minute of fields.minute) {
        for (const second of fields.second) {
          const wall = dayStart + hour * 3_600_000 + minute * MINUTE + second * 1000;
          const before = wall - offsetStart;
          const later = wall - offsetEnd;
          const instants: number[] = [];
          const validBefore = before < change;
          const validLater = later >= change;
          if (validBefore) instants.push(before);
          if (validLater && (!validBefore || !fixedHour)) instants.push(later);
          if (!validBefore && !validLater && fixedHour) instants.push(change);
          for (const instant of instants) {
            if (instant > after && (best === null || instant < best)) best = instant;
          }
          // Without a change the instants rise with the wall time: the first one after `after` is the answer.
          if (best !== null && change === Infinity) return best;
        }
      }
    }
    if (best !== null) return best;
  }
  return null;
}

/**
 * The box's own time zone (TZ, else the system's): backups and other box upkeep run on the box's clock. Named as ICU
 * finds it (TZ, else the zone /etc/localtime links to) without an Intl call when the tz database has that zone
 * (zoneinfo.ts says why); Intl answers the rest.
 */
export function boxTimezone(): string {
  const fromEnv = process.env.TZ?.replace(/^:/, '');
  let named = fromEnv;
  if (fromEnv === undefined) {
    try {
      named = /\/zoneinfo\/(.+)$/.exec(fs.readlinkSync('/etc/localtime'))?.[1];
    } catch {
      named = undefined;
    }
  }
  if (named && zoneRules(named)) return named;
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
}

/** The longest single wait: a far fire time is reached in steps, so a clock step or a long sleep is noticed within it. */
const MAX_WAIT_MS = 3_600_000;

/**
 * Runs `run` at every time `expression` fires in `timezone` (nextCronRun's rules), until stopped. A fire time the
 * process missed (asleep, or the event loop blocked) runs once when it wakes, then the next time after now is armed.
 */
export class CronTimer {
  private timer: NodeJS.Timeout | null = null;
  private next: number | null = null;

  constructor(
    private readonly expression: string,
    private readonly timezone: string,
    private readonly run: (firedFor: Date) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Arms the first fire time; throws on an expression node-cron does not accept. */
  start(): void {
    if (!cron.validate(this.expression)) throw new Error(`invalid cron expression "${this.expression}"`);
    this.next = nextCronRun(this.expression, this.timezone, this.now());
    this.arm();
  }

  nextRun(): Date | null {
    return this.next === null ? null : new Date(this.next);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.next = null;
  }

  private arm(): void {
    if (this.next === null) return;
    this.timer = setTimeout(() => this.wake(), Math.min(Math.max(this.next - this.now(), 0), MAX_WAIT_MS));
  }

  private wake(): void {
    this.timer = null;
    const due = this.next;
    if (due === null) return;
    const now = this.now();
    if (now < due) {
      this.arm();
      return;
    }
    // The next time is armed before the task starts: a task that throws or takes long does not stop the schedule.
    this.next = nextCronRun(this.expression, this.timezone, Math.max(now, due));
    this.arm();
    this.run(new Date(due));
  }
}
