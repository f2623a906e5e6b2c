// A zone's offset from UTC read from the system's tz database (TZif files, RFC 8536, in TZDIR or /usr/share/zoneinfo)
// instead of Intl. Why: the first Intl.DateTimeFormat maps ~4.6 MiB of node's embedded ICU data and ~1.3 MiB more of
// its code into the process for good, for what is a table lookup here (issue 29, idle RSS; figures in
// docs/performance-edge.md). A zone without a readable file gets null and calendar.ts falls back to Intl.
import fs from 'node:fs';
import path from 'node:path';

/** The offsets of one zone: explicit transitions, then the POSIX TZ rule of the file's footer for later instants. */
export type ZoneRules = { offsetSeconds(epochSeconds: number): number };

/** An IANA name such as Europe/Berlin or Etc/GMT+5: never a path that leaves the zoneinfo directory. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;

const loaded = new Map<string, ZoneRules | null>();

/** The zone's rules from its TZif file, kept per zone for the process's life; null when there is no usable file. */
export function zoneRules(timezone: string): ZoneRules | null {
  let rules = loaded.get(timezone);
  if (rules === undefined) {
    rules = readZone(timezone);
    if (loaded.size > 64) loaded.clear();
    loaded.set(timezone, rules);
  }
  return rules;
}

function readZone(timezone: string): ZoneRules | null {
  if (!ZONE_NAME.test(timezone) || timezone.length > 64) return null;
  const dir = process.env.TZDIR || '/usr/share/zoneinfo';
  let data: Buffer;
  try {
    data = fs.readFileSync(path.join(dir, timezone));
  } catch {
    return null;
  }
  try {
    return parseTzif(data);
  } catch {
    return null;
  }
}

/** Parses a TZif file of version 2 or later (64-bit times and a footer). Throws on anything else. */
export function parseTzif(data: Buffer): ZoneRules {
  const header = (at: number) => {
    if (data.toString('latin1', at, at + 4) !== 'TZif') throw new Error('not a TZif file');
    return {
      version: data[at + 4],
      isutcnt: data.readUInt32BE(at + 20),
      isstdcnt: data.readUInt32BE(at + 24),
      leapcnt: data.readUInt32BE(at + 28),
      timecnt: data.readUInt32BE(at + 32),
      typecnt: data.readUInt32BE(at + 36),
      charcnt: data.readUInt32BE(at + 40),
    };
  };
  const v1 = header(0);
  if (v1.version < 0x32) throw new Error('TZif version 1 has no 64-bit data');
  const v1Size = v1.timecnt * 5 + v1.typecnt * 6 + v1.charcnt + v1.leapcnt * 8 + v1.isstdcnt + v1.isutcnt;
  const start = 44 + v1Size;
  const h = header(start);
  // Leap-second ("right/") zones count TAI-like seconds; the service's clock is POSIX time.
  if (h.leapcnt > 0 || h.typecnt === 0) throw new Error('unsupported TZif data');
  let at = start + 44;
  const transitions = new Float64Array(h.timecnt);
  for (let i = 0; i < h.timecnt; i += 1, at += 8) transitions[i] = Number(data.readBigInt64BE(at));
  const typeOf = data.subarray(at, at + h.timecnt);
  at += h.timecnt;
  const offsets = new Int32Array(h.typecnt);
  for (let i = 0; i < h.typecnt; i += 1, at += 6) offsets[i] = data.readInt32BE(at);
  at += h.charcnt + h.isstdcnt + h.isutcnt;
  const footerEnd = data.indexOf(0x0a, at + 1);
  const footer = data[at] === 0x0a && footerEnd > at ? data.toString('latin1', at + 1, footerEnd) : '';
  const rule = footer ? parsePosixTz(footer) : null;
  const last = h.timecnt > 0 ? transitions[h.timecnt - 1] : -Infinity;
  return {
    offsetSeconds(t: number): number {
      if (rule && t >= last) return rule(t);
      if (h.timecnt === 0 || t < transitions[0]) return offsets[0];
      let low = 0;
      let high = h.timecnt - 1;
      while (low < high) {
        const middle = (low + high + 1) >> 1;
        if (transitions[middle] <= t) low = middle;
        else high = middle - 1;
      }
      return offsets[typeOf[low]];
    },
  };
}

/**
 * A POSIX TZ string as TZif footers use it (RFC 8536 §3.3): `std offset [dst [offset] [,start[/time],end[/time]]]`,
 * with offsets west-positive and rule times that may be negative or past 24 h. Answers the offset (east-positive
 * seconds) at an instant.
 */
export function parsePosixTz(spec: string): (epochSeconds: number) => number {
  let at = 0;
  const name = () => {
    if (spec[at] === '<') {
      const end = spec.indexOf('>', at);
      if (end < 0) throw new Error(`bad TZ string ${spec}`);
      at = end + 1;
      return;
    }
    const begin = at;
    while (at < spec.length && /[A-Za-z]/.test(spec[at])) at += 1;
    if (at - begin < 3) throw new Error(`bad TZ string ${spec}`);
  };
  /** [+-]hh[:mm[:ss]] in seconds. */
  const time = () => {
    const match = /^([+-]?)(\d{1,3})(?::(\d{2}))?(?::(\d{2}))?/.exec(spec.slice(at));
    if (!match) throw new Error(`bad TZ string ${spec}`);
    at += match[0].length;
    const seconds = Number(match[2]) * 3600 + Number(match[3] ?? 0) * 60 + Number(match[4] ?? 0);
    return match[1] === '-' ? -seconds : seconds;
  };
  name();
  const std = 0 - time();
  if (at >= spec.length) return () => std;
  name();
  const dst = spec[at] && spec[at] !== ',' ? 0 - time() : std + 3600;
  if (spec[at] !== ',') throw new Error(`TZ string without rules: ${spec}`);
  at += 1;
  const dateRule = () => {
    let date: (year: number) => number;
    const month = /^M(\d{1,2})\.(\d)\.(\d)/.exec(spec.slice(at));
    const julian = /^J(\d{1,3})/.exec(spec.slice(at));
    const zeroBased = /^(\d{1,3})/.exec(spec.slice(at));
    if (month) {
      at += month[0].length;
      const [m, week, weekday] = [Number(month[1]), Number(month[2]), Number(month[3])];
      date = (year) => {
        const first = Date.UTC(year, m - 1, 1) / 1000;
        const firstWeekday = new Date(first * 1000).getUTCDay();
        let day = ((weekday - firstWeekday + 7) % 7) + (week - 1) * 7;
        const length = new Date(Date.UTC(year, m, 0)).getUTCDate();
        while (day >= length) day -= 7;
        return first + day * 86_400;
      };
    } else if (julian) {
      // Jn: day 1-365, February 29 never counted.
      at += julian[0].length;
      const n = Number(julian[1]);
      date = (year) => {
        const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
        return Date.UTC(year, 0, 1) / 1000 + (n - 1 + (leap && n >= 60 ? 1 : 0)) * 86_400;
      };
    } else if (zeroBased) {
      at += zeroBased[0].length;
      const n = Number(zeroBased[1]);
      date = (year) => Date.UTC(year, 0, 1) / 1000 + n * 86_400;
    } else throw new Error(`bad TZ rule in ${spec}`);
    let seconds = 7200;
    if (spec[at] === '/') {
      at += 1;
      seconds = time();
    }
    return (year: number) => date(year) + seconds;
  };
  const startsLocal = dateRule();
  if (spec[at] !== ',') throw new Error(`bad TZ string ${spec}`);
  at += 1;
  const endsLocal = dateRule();
  if (at !== spec.length) throw new Error(`bad TZ string ${spec}`);
  return (t) => {
    // The year of the instant in standard time; a southern zone's summer spans New Year, which the comparison handles.
    const year = new Date((t + std) * 1000).getUTCFullYear();
    const starts = startsLocal(year) - std;
    const ends = endsLocal(year) - dst;
    const inDst = starts < ends ? t >= starts && t < ends : t >= starts || t < ends;
    return inDst ? dst : std;
  };
}
