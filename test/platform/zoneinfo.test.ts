// Zone offsets from the system's tz database (src/platform/time/zoneinfo.ts), checked against zdump (glibc's tz code on the
// same files) at every transition from 1970 to 2040, against zic's slim files (where the footer's POSIX rule answers
// everything after the last explicit transition), and against Intl (what calendar.ts used before, and still uses for
// a zone without a file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { dayStart, siteDay, zoneOffsetMs } from '../../src/platform/time/calendar.ts';
import { parsePosixTz, parseTzif, zoneRules } from '../../src/platform/time/zoneinfo.ts';
import { boxTimezone } from '../../src/platform/jobs/cron.ts';
import { tempDir } from '../helpers/server.ts';

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'America/Santiago',
  'Pacific/Chatham',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'America/St_Johns',
  'Africa/Casablanca',
  'America/Nuuk',
  'Asia/Jerusalem',
  'Europe/Dublin',
  'America/Sao_Paulo',
  'Pacific/Apia',
  'Asia/Tehran',
  'Etc/GMT+5',
  'UTC',
];

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** zdump's verbose lines for `zone` (a name or a POSIX TZ string): each instant either side of a transition. */
function zdump(zone: string, from: number, to: number): { seconds: number; offset: number }[] {
  const out = execFileSync('zdump', ['-v', '-c', `${from},${to}`, zone], { encoding: 'utf8' });
  const rows: { seconds: number; offset: number }[] = [];
  for (const line of out.split('\n')) {
    const match = / \w{3} (\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d+) UT = .* gmtoff=(-?\d+)$/.exec(line);
    if (!match) continue;
    const [, month, day, hour, minute, second, year, offset] = match;
    const ms = Date.UTC(Number(year), MONTHS.indexOf(month), Number(day), Number(hour), Number(minute), Number(second));
    rows.push({ seconds: ms / 1000, offset: Number(offset) });
  }
  return rows;
}

test('each zone has the offset zdump gives on either side of every transition, 1970-2040', () => {
  let checked = 0;
  for (const zone of ZONES) {
    const rules = zoneRules(zone);
    assert.ok(rules, `${zone} is read from the tz database`);
    for (const { seconds, offset } of zdump(zone, 1970, 2040)) {
      assert.equal(rules.offsetSeconds(seconds), offset, `${zone} at ${new Date(seconds * 1000).toISOString()}`);
      checked += 1;
    }
  }
  assert.ok(checked > 2000, `${checked} instants checked`);
});

test("zic's slim files, which end their table early and leave the rest to the footer rule, give the same offsets", () => {
  const dir = tempDir();
  try {
    execFileSync('zic', ['-b', 'slim', '-d', dir, '/usr/share/zoneinfo/tzdata.zi']);
    let footerAnswered = 0;
    for (const zone of ZONES) {
      const slim = parseTzif(fs.readFileSync(path.join(dir, zone)));
      const fat = zoneRules(zone)!;
      for (const { seconds, offset } of zdump(zone, 1970, 2040)) {
        assert.equal(slim.offsetSeconds(seconds), offset, `slim ${zone} at ${new Date(seconds * 1000).toISOString()}`);
        assert.equal(fat.offsetSeconds(seconds), offset);
      }
      // Hourly through 2030-2031: the fat file's table and the slim file's footer agree everywhere, not only at changes.
      for (let seconds = Date.UTC(2030, 0, 1) / 1000; seconds < Date.UTC(2032, 0, 1) / 1000; seconds += 3600) {
        assert.equal(slim.offsetSeconds(seconds), fat.offsetSeconds(seconds), `${zone} at ${seconds}`);
        footerAnswered += 1;
      }
    }
    assert.equal(footerAnswered, ZONES.length * 2 * 8760);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('POSIX TZ rules: month-week-day, Julian and zero-based days, negative and past-24 h times, southern and all-year DST', () => {
  const specs = [
    'CET-1CEST,M3.5.0,M10.5.0/3',
    '<-04>4<-03>,M9.1.6/24,M4.1.6/24',
    '<-02>2<-01>,M3.5.0/-1,M10.5.0/0',
    '<+1030>-10:30<+11>-11,M10.1.0,M4.1.0',
    'IST-2IDT,M3.4.4/26,M10.5.0',
    'NZST-12NZDT,M9.5.0,M4.1.0/3',
    'AAA3BBB,J60/2,J300/2',
    'AAA3BBB,59/2,299/2',
    '<+0545>-5:45',
  ];
  for (const spec of specs) {
    const rule = parsePosixTz(spec);
    const rows = zdump(spec, 2020, 2032);
    if (spec.includes(',')) assert.ok(rows.length >= 40, `${spec}: zdump lists its changes`);
    for (const { seconds, offset } of rows) assert.equal(rule(seconds), offset, `${spec} at ${new Date(seconds * 1000).toISOString()}`);
  }
  const allYear = parsePosixTz('EST5EDT,0/0,J365/25');
  for (const iso of ['2027-01-01T04:30:00Z', '2027-01-15T12:00:00Z', '2027-07-15T12:00:00Z', '2027-12-31T23:00:00Z'])
    assert.equal(allYear(Date.parse(iso) / 1000), -4 * 3600, iso);
  for (const bad of ['', 'C-1', 'CET-1CEST,M3.5.0', 'CET-1CEST,X3,M10.5.0', 'CET-1CEST,M3.5.0,M10.5.0/3junk'])
    assert.throws(() => parsePosixTz(bad), /TZ/, bad);
});

test('the offsets, days and midnights match what Intl gives, 2000-2040', () => {
  const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'Pacific/Chatham'];
  const step = 6 * 86_400_000 + 3_600_000 + 60_000 + 1000;
  let checked = 0;
  for (const zone of zones) {
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
    for (let ms = Date.UTC(2000, 0, 1, 0, 0, 0, 500); ms < Date.UTC(2040, 0, 1); ms += step) {
      const parts = Object.fromEntries(format.formatToParts(ms).map((part) => [part.type, Number(part.value)]));
      const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
      assert.equal(zoneOffsetMs(zone, ms), wall - (ms - 500), `${zone} at ${new Date(ms).toISOString()}`);
      const local = siteDay(zone, new Date(ms));
      assert.equal(local, day.format(ms));
      assert.equal(day.format(dayStart(zone, local)), local, 'the day starts within itself');
      assert.notEqual(day.format(dayStart(zone, local) - 1), local, 'and not a moment earlier');
      checked += 1;
    }
  }
  assert.ok(checked > 10_000, `${checked} instants checked`);
});

test('a zone the tz database lacks is still answered, by Intl; a name that is not a zone never reads outside it', () => {
  // Intl takes zone names in any case; the file system does not.
  assert.equal(zoneRules('europe/berlin'), null);
  for (const ms of [Date.UTC(2026, 0, 15), Date.UTC(2026, 6, 15), Date.UTC(2026, 2, 29, 1, 0, 0)])
    assert.equal(zoneOffsetMs('europe/berlin', ms), zoneOffsetMs('Europe/Berlin', ms));
  assert.equal(siteDay('europe/berlin', new Date(Date.UTC(2026, 2, 28, 23, 30))), '2026-03-29');
  for (const name of ['../../../etc/passwd', 'Europe/../../../etc/passwd', '/etc/passwd', 'zone.tab', 'Europe/Berlin/', ''])
    assert.equal(zoneRules(name), null, name);
  // A file that is not TZif data, or TZif version 1 alone (no 64-bit section, no footer), is refused.
  assert.throws(() => parseTzif(Buffer.from('not a zone file at all, long enough to read a header from it............')));
  const v1 = Buffer.alloc(44);
  v1.write('TZif', 0, 'latin1');
  assert.throws(() => parseTzif(v1), /version 1/);
});

test("the box's zone is named without Intl when the tz database has it, and is the zone Intl reports", () => {
  const saved = process.env.TZ;
  try {
    process.env.TZ = 'America/Sao_Paulo';
    assert.equal(boxTimezone(), 'America/Sao_Paulo');
    process.env.TZ = ':Asia/Kathmandu';
    assert.equal(boxTimezone(), 'Asia/Kathmandu');
    delete process.env.TZ;
    const zone = boxTimezone();
    const intl = Intl.DateTimeFormat().resolvedOptions().timeZone;
    for (const ms of [Date.UTC(2026, 0, 15), Date.UTC(2026, 6, 15)]) assert.equal(zoneOffsetMs(zone, ms), zoneOffsetMs(intl, ms), `${zone} vs ${intl}`);
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});
