// What the weather-normalised month-on-month change (issue 41 item 7) costs a comparison, in process: METERS meters × DAYS
// days and as many days of outdoor temperature seeded into a temporary data dir; then, for each of 12 months not asked
// before (no kept answer), GET /api/analysis/compare's work for period=month (the raw figures + the normalisation) against
// period=custom over the same dates (the same raw figures, no normalisation): the same run, the same data; for the site
// (the main incomer) and for the largest area. Then the same month questions again (kept answers). Last, the whole-day
// rule alone over a baseline year and two months (what one month question counts): read from the rows' presence byte
// (EnergyFigures.wholeDays, now) against the decoded completeness of every day (before), same run, same data.
// Run: npm run bench:normalisation   (BENCH_METERS, BENCH_DAYS scale it)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Comparisons } from '../../src/analysis/comparisons.ts';
import { EnergyCompleteness } from '../../src/energy/completeness.ts';
import { addDays, dayIntervals, daysBetween } from '../../src/platform/time/calendar.ts';
import { createSiteMeters, openSeeding } from './seeding.ts';

const METERS = Number(process.env.BENCH_METERS ?? 60);
const DAYS = Number(process.env.BENCH_DAYS ?? 800);
const fmt = (value: number, digits = 2) => value.toFixed(digits);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-normalisation-'));
const seeded = openSeeding(dataDir);
const { db, energy } = seeded;
const today = new Date().toISOString().slice(0, 10);
const ids = createSiteMeters(seeded, METERS, { areas: 1 });
const temps = db.sqlite.prepare("INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES ('temp.outdoor', ?, ?, 48)");
let started = performance.now();
daysBetween(addDays(today, -DAYS), today).forEach((day, d) => {
  const { start, count } = dayIntervals('UTC', day);
  const hourly = Float32Array.from(
    { length: 24 },
    (_, h) => 10.5 - 7.5 * Math.cos((2 * Math.PI * (d - 20)) / 365.25) + 3 * Math.sin(d * 0.9) + 3 * Math.cos(h / 4),
  );
  const hdd = hourly.reduce((sum, t) => sum + Math.max(0, 15.5 - t), 0) / 24;
  db.sqlite.transaction(() => {
    temps.run(day, Buffer.from(hourly.buffer));
    energy.store.save(
      ids.map((meterId, m) => ({
        meterId,
        day,
        start,
        kwh: new Float32Array(count).fill((m === 0 ? 40 : 1 + (m % 5)) * (1 + 0.04 * hdd) * (0.95 + 0.1 * Math.random())),
        flags: new Uint8Array(count),
        maxKw: null,
        stored: null,
      })),
    );
  })();
});
console.log(
  `normalisation bench: ${METERS} meters × ${DAYS} days seeded in ${fmt((performance.now() - started) / 1000, 1)} s; ${os.cpus().length} cores, load average ${fmt(os.loadavg()[0], 1)}`,
);

const comparisons = new Comparisons(db, energy.figures, energy.tariffs, energy.days);
const months = Array.from({ length: 12 }, (_, i) => {
  const [y, m] = today.split('-').map(Number);
  const index = y * 12 + (m - 1) - 13 - i;
  const from = `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}-01`;
  const next = index + 1;
  return { from, to: `${Math.floor(next / 12)}-${String((next % 12) + 1).padStart(2, '0')}-01` };
});
for (const [name, target] of [
  ['site (1 meter)', {}],
  [`area of ${METERS - 1} meters`, { area: 'Area 1' }],
] as const) {
  // Raw first for half the months and normalised first for the other half: neither profits from the other's reads.
  let raw = 0;
  let month = 0;
  let given = 0;
  months.forEach(({ from, to }, i) => {
    const time = (work: () => unknown) => {
      const t = performance.now();
      work();
      return performance.now() - t;
    };
    const asRaw = () => comparisons.compare('custom', target, { from, to });
    const asMonth = () => comparisons.compare('month', target, { at: from });
    if (i % 2) {
      raw += time(asRaw);
      month += time(asMonth);
    } else {
      month += time(asMonth);
      raw += time(asRaw);
    }
    if (comparisons.compare('month', target, { at: from }).weatherNormalised?.percent !== null) given += 1;
  });
  started = performance.now();
  for (const { from } of months) comparisons.compare('month', target, { at: from });
  const kept = (performance.now() - started) / months.length;
  console.log(
    `${name}: period=month (raw + normalised) ${fmt(month / months.length)} ms, period=custom same dates (raw) ${fmt(raw / months.length)} ms per question; ` +
      `ratio ${fmt(month / raw)}; normalised figure given for ${given}/${months.length} months; kept answer ${fmt(kept, 3)} ms`,
  );
}
{
  const completeness = new EnergyCompleteness(energy.days);
  const { timezone } = energy.figures.settings();
  for (const [name, target] of [
    ['site (1 meter)', {}],
    [`area of ${METERS - 1} meters`, { area: 'Area 1' }],
  ] as const) {
    const ids = energy.figures.ids(target);
    let decoded = 0;
    let presence = 0;
    let same = 0;
    for (const { from, to } of months) {
      const first = addDays(from, -396);
      let t = performance.now();
      const whole = new Set<string>();
      for (const day of completeness.byDay(ids, first, to, timezone)) {
        if (day.intervals > 0 && day.missing === 0 && day.intervals === dayIntervals(timezone, day.day).count) whole.add(day.day);
      }
      decoded += performance.now() - t;
      t = performance.now();
      const fast = completeness.wholeDays(ids, first, to, timezone);
      presence += performance.now() - t;
      if (fast.whole.size === whole.size && [...whole].every((day) => fast.whole.has(day))) same += 1;
    }
    console.log(
      `${name}: whole days of a baseline year + 2 months: presence byte ${fmt(presence / months.length)} ms, decoded completeness (before) ` +
        `${fmt(decoded / months.length)} ms; ratio ${fmt(presence / decoded)}; the same days for ${same}/${months.length} months`,
    );
  }
}
seeded.close();
fs.rmSync(dataDir, { recursive: true, force: true });
