// Real buildings' public interval data (test/analysis/data/README.md) loaded into a real EMS: hourly electricity written
// through the interval store (each hour spread over its four 15-minute intervals, flagged estimated as the history import
// does; an hour the source marks missing is left missing), and the hourly outdoor temperature served as the gateway's
// history of a temperature point over HTTP. In-process (no child process): the service and the gateway share this one.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import assert from 'node:assert/strict';
import { FLAG_ESTIMATED, type DayRecord } from '../../src/metering/store.ts';
import { addDays } from '../../src/platform/time/calendar.ts';
import { misbehavingRig, type MisbehavingRig } from './rig.ts';

export const DATA_DIR = path.join(import.meta.dirname, '..', 'analysis', 'data');
const HOUR = 3_600_000;

/** A data file's hourly values by their hour's start (UTC ms), in file order. */
export function readHourly(file: string): Map<number, number> {
  const text = gunzipSync(readFileSync(path.join(DATA_DIR, file))).toString('utf8');
  const values = new Map<number, number>();
  for (const line of text.split('\n').slice(1)) {
    if (!line) continue;
    const [hour, value] = line.split(',');
    values.set(Date.parse(`${hour}:00:00Z`), Number(value));
  }
  return values;
}

/**
 * The source's hours of exactly 0 kWh are its missing readings (its README: "missing or invalid readings replaced with
 * 0 readings"), so they are read as missing here, as the source's own documentation asks.
 */
export function energyHours(file: string): Map<number, number> {
  return new Map([...readHourly(file)].filter(([, kwh]) => kwh !== 0));
}

export type RealRig = MisbehavingRig & {
  /** A meter with the hours of `file` in [from, to) written as its intervals; its id. */
  building(name: string, hours: Map<number, number>, from: string, to: string): Promise<number>;
  /** Serves `temperatures` (hourly means) as the gateway's history of `code`, leaving out the hours of `withoutDays`. */
  temperatures(code: string, temperatures: Map<number, number>, withoutDays?: string[]): void;
};

export async function realRig(): Promise<RealRig> {
  const r = await misbehavingRig();
  try {
    // Both sources time their hours in UTC: the site's days are UTC days.
    const zone = await r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body: { timezone: 'UTC' } });
    assert.equal(zone.status, 200, zone.text);
  } catch (error) {
    await r.close();
    throw error;
  }
  const { store } = r.server.service.deps.energy;
  return {
    ...r,
    async building(name, hours, from, to) {
      const meter = await r.meter({ name, code: `test.${name.toLowerCase().replace(/\W+/g, '.')}.kwh`, kind: 'energy' });
      const records: DayRecord[] = [];
      for (let day = from; day < to; day = addDays(day, 1)) {
        const record = store.load(meter.id, day);
        let any = false;
        for (let h = 0; h < 24; h += 1) {
          const kwh = hours.get(record.start + h * HOUR);
          if (kwh === undefined) continue;
          any = true;
          for (let q = 0; q < 4; q += 1) {
            record.kwh[h * 4 + q] = kwh / 4;
            record.flags[h * 4 + q] = FLAG_ESTIMATED;
          }
        }
        if (any) records.push(record);
      }
      store.transaction(() => store.save(records));
      return meter.id;
    },
    temperatures(code, temperatures, withoutDays = []) {
      const skip = new Set(withoutDays);
      const rows: { at: number; value: number }[] = [];
      for (const [at, value] of temperatures) if (!skip.has(new Date(at).toISOString().slice(0, 10))) rows.push({ at: at + HOUR / 2, value });
      r.gateway.history.set(code, rows);
    },
  };
}

/** Whole days of an hourly series: UTC days with all 24 hours, their sum. */
export function wholeDaySums(hours: Map<number, number>, from: string, to: string): Map<string, number> {
  const days = new Map<string, number>();
  for (let day = from; day < to; day = addDays(day, 1)) {
    const start = Date.parse(`${day}T00:00:00Z`);
    let sum = 0;
    let n = 0;
    for (let h = 0; h < 24; h += 1) {
      const kwh = hours.get(start + h * HOUR);
      if (kwh === undefined) continue;
      sum += kwh;
      n += 1;
    }
    if (n === 24) days.set(day, sum);
  }
  return days;
}

/** Days of [from, to) with some hours of the series but not all 24 (a partial day). */
export function partialDays(hours: Map<number, number>, from: string, to: string): string[] {
  const partial: string[] = [];
  for (let day = from; day < to; day = addDays(day, 1)) {
    const start = Date.parse(`${day}T00:00:00Z`);
    let n = 0;
    for (let h = 0; h < 24; h += 1) if (hours.has(start + h * HOUR)) n += 1;
    if (n > 0 && n < 24) partial.push(day);
  }
  return partial;
}

/** The mean of each UTC day's hourly temperatures. */
export function dailyMeanC(temperatures: Map<number, number>): Map<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const [at, value] of temperatures) {
    const day = new Date(at).toISOString().slice(0, 10);
    const s = sums.get(day) ?? { sum: 0, n: 0 };
    s.sum += value;
    s.n += 1;
    sums.set(day, s);
  }
  return new Map([...sums].map(([day, s]) => [day, s.sum / s.n]));
}

export type ChangePointFit = {
  model: string;
  heatingC: number | null;
  coolingC: number | null;
  n: number;
  p: number;
  cvRmsePercent: number;
  rho: number;
  predict: (meanC: number, weekend: boolean) => number;
};

/**
 * An independent ASHRAE Guideline 14 change-point fit (what a reviewer would write, not EMS's code): daily kWh on the
 * day's mean outdoor temperature with a weekend dummy; 2P, 3PH, 3PC, 4P with change points on a 0.5 K grid between the
 * 5th and 95th percentiles, slopes of their physical sign; the model kept is the lowest CV(RMSE) (n − p, change
 * points counted); lag-1 autocorrelation of the residuals in day order.
 */
export function changePointFit(days: { day: string; kwh: number; meanC: number }[]): ChangePointFit {
  const weekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
  const temps = days.map((d) => d.meanC).sort((a, b) => a - b);
  const lo = Math.ceil(temps[Math.floor(temps.length * 0.05)] * 2) / 2;
  const hi = Math.floor(temps[Math.floor(temps.length * 0.95)] * 2) / 2;
  const y = days.map((d) => d.kwh);
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  let best: (ChangePointFit & { beta: number[] }) | null = null;
  const features = (t: number, we: boolean, heatingC: number | null, coolingC: number | null, linear: boolean) => [
    1,
    ...(linear ? [t] : []),
    ...(heatingC !== null ? [Math.max(0, heatingC - t)] : []),
    ...(coolingC !== null ? [Math.max(0, t - coolingC)] : []),
    we ? 1 : 0,
  ];
  const consider = (model: string, heatingC: number | null, coolingC: number | null, linear = false) => {
    const rows = days.map((d) => features(d.meanC, weekend(d.day), heatingC, coolingC, linear));
    const beta = solve(rows, y);
    if (!beta) return;
    let k = linear ? 2 : 1;
    if (heatingC !== null && beta[k++] < 0) return;
    if (coolingC !== null && beta[k++] < 0) return;
    const residuals = rows.map((x, i) => y[i] - x.reduce((s, v, j) => s + v * beta[j], 0));
    const p = beta.length + (heatingC !== null ? 1 : 0) + (coolingC !== null && coolingC !== heatingC ? 1 : 0);
    const cv = (Math.sqrt(residuals.reduce((s, e) => s + e * e, 0) / (days.length - p)) / mean) * 100;
    if (best && cv >= best.cvRmsePercent) return;
    const rm = residuals.reduce((a, b) => a + b, 0) / residuals.length;
    let num = 0;
    let den = 0;
    residuals.forEach((e, i) => {
      den += (e - rm) ** 2;
      if (i > 0) num += (e - rm) * (residuals[i - 1] - rm);
    });
    best = {
      model,
      heatingC,
      coolingC,
      n: days.length,
      p,
      cvRmsePercent: cv,
      rho: den > 0 ? num / den : 0,
      beta,
      predict: (t, we) => features(t, we, heatingC, coolingC, linear).reduce((s, v, j) => s + v * beta[j], 0),
    };
  };
  consider('2P', null, null, true);
  for (let t = lo; t <= hi + 1e-9; t += 0.5) {
    consider('3PH', t, null);
    consider('3PC', null, t);
    consider('4P', t, t);
  }
  assert.ok(best, 'a change-point model fits');
  return best;
}

/** G14-2014 Annex B savings uncertainty (± kWh) at 90 % for m reporting days expecting `expectedKwh`, lag-1 corrected. */
export function annexBUncertainty(fit: ChangePointFit, m: number, expectedKwh: number): number {
  const rho = Math.max(0, fit.rho);
  const nEff = (fit.n * (1 - rho)) / (1 + rho);
  return 1.645 * 1.26 * (fit.cvRmsePercent / 100) * expectedKwh * Math.sqrt((fit.n / nEff) * (1 + 2 / nEff) * (1 / m));
}

function solve(rows: number[][], y: number[]): number[] | null {
  const p = rows[0].length;
  const a = Array.from({ length: p }, () => new Array<number>(p + 1).fill(0));
  rows.forEach((x, k) => {
    for (let i = 0; i < p; i += 1) {
      for (let j = 0; j < p; j += 1) a[i][j] += x[i] * x[j];
      a[i][p] += x[i] * y[k];
    }
  });
  for (let c = 0; c < p; c += 1) {
    let pivot = c;
    for (let r = c + 1; r < p; r += 1) if (Math.abs(a[r][c]) > Math.abs(a[pivot][c])) pivot = r;
    [a[c], a[pivot]] = [a[pivot], a[c]];
    if (Math.abs(a[c][c]) < 1e-9) return null;
    for (let r = 0; r < p; r += 1) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let j = c; j <= p; j += 1) a[r][j] -= f * a[c][j];
    }
  }
  return a.map((row, i) => row[p] / row[i]);
}
