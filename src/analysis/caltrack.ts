// The reference methods US utility programs use (CalTRACK 2.0, the methods OpenEEmeter implements), beside EMS's own
// degree-day model, so an energy manager can show a programme the method it expects (issue 52). Pure functions over
// whole days and whole hours (wholeDays.ts); the baseline route fits them, and holds them to the same guard rails.
//
// CalTRACK daily (§3): usage per day on the day's mean outdoor temperature, four candidate models: intercept only,
// intercept + HDD(bp_h), intercept + CDD(bp_c), intercept + HDD(bp_h) + CDD(bp_c) with bp_c ≥ bp_h; HDD = max(0, bp − T̄),
// CDD = max(0, T̄ − bp) from the day's mean temperature. Balance points searched on a 1 °F grid over 30–90 °F; a balance
// point is tried only with at least 10 days of non-zero degree days and 20 degree days in all. A candidate qualifies when
// every slope is positive and significant (p < 0.1, two-sided t-test); the qualified model with the highest adjusted R²
// is chosen. No day-type term (CalTRACK daily has none).
//
// CalTRACK hourly (§4, the time-of-week-and-temperature model of Mathieu et al. 2011): per calendar month a weighted
// least-squares model on the month's hours (weight 1) and the two neighbouring months' (weight 0.5): 168 time-of-week
// indicators plus piecewise-linear temperature components on the bin endpoints 30, 45, 55, 65, 75, 90 °F (a bin with
// fewer than 20 hours in the segment is merged with its neighbour), separately for occupied and unoccupied times of week;
// a time of week is occupied when more than 65 % of its hours lie above a weighted HDD(50 °F)/CDD(65 °F) fit of the
// segment. Each hour is predicted by its month's model.
import { studentT } from './guardRails.ts';
import { round } from '../platform/numbers.ts';

export const METHODS = ['ems', 'caltrack-daily', 'caltrack-hourly'] as const;
export type Method = (typeof METHODS)[number];

const toF = (c: number) => (c * 9) / 5 + 32;
const toC = (f: number) => ((f - 32) * 5) / 9;

/**
 * Weighted least squares by the normal equations; a column that carries no information in the data (a time of week or
 * a temperature bin with no hours: a zero pivot) is left at 0 rather than failing the fit. Returns the coefficients
 * and (XᵀWX)⁻¹'s diagonal for the columns solved (NaN for those left out), for the coefficients' standard errors.
 */
export function weightedLeastSquares(rows: ArrayLike<number>[], y: ArrayLike<number>, w?: ArrayLike<number>, wantInverse = false) {
  const p = rows[0].length;
  const a = Array.from({ length: p }, () => new Float64Array(p));
  const b = new Float64Array(p);
  for (let k = 0; k < rows.length; k += 1) {
    const x = rows[k];
    const weight = w ? w[k] : 1;
    if (weight === 0) continue;
    for (let i = 0; i < p; i += 1) {
      const xi = x[i];
      if (xi === 0) continue;
      const row = a[i];
      for (let j = 0; j < p; j += 1) if (x[j] !== 0) row[j] += weight * xi * x[j];
      b[i] += weight * xi * y[k];
    }
  }
  // Gauss-Jordan on [A | b | I] with partial pivoting; a pivot below 1e-9 of the column's scale drops the column.
  const width = wantInverse ? 2 * p + 1 : p + 1;
  const m = a.map((row, i) => {
    const full = new Float64Array(width);
    full.set(row);
    full[p] = b[i];
    if (wantInverse) full[p + 1 + i] = 1;
    return full;
  });
  const scale = a.map((row, i) => Math.max(Math.abs(row[i]), 1e-300));
  const used = new Array<boolean>(p).fill(false);
  const pivotRow = new Array<number>(p).fill(-1);
  let r = 0;
  for (let c = 0; c < p && r < p; c += 1) {
    let pivot = r;
    for (let k = r + 1; k < p; k += 1) if (Math.abs(m[k][c]) > Math.abs(m[pivot][c])) pivot = k;
    if (Math.abs(m[pivot][c]) <= 1e-9 * scale[c]) continue;
    [m[r], m[pivot]] = [m[pivot], m[r]];
    const inv = 1 / m[r][c];
    for (let j = 0; j < width; j += 1) m[r][j] *= inv;
    for (let k = 0; k < p; k += 1) {
      if (k === r || m[k][c] === 0) continue;
      const f = m[k][c];
      for (let j = 0; j < width; j += 1) m[k][j] -= f * m[r][j];
    }
    used[c] = true;
    pivotRow[c] = r;
    r += 1;
  }
  const beta = new Float64Array(p);
  const inverseDiagonal = new Float64Array(p).fill(NaN);
  for (let c = 0; c < p; c += 1) {
    if (!used[c]) continue;
    beta[c] = m[pivotRow[c]][p];
    if (wantInverse) inverseDiagonal[c] = m[pivotRow[c]][p + 1 + c];
  }
  return { beta, used, inverseDiagonal, columns: used.filter(Boolean).length };
}

// --- CalTRACK daily ----------------------------------------------------------------------------------------------

export type CaltrackDay = { meanC: number; actualKwh: number };
export type CaltrackDailyModel = {
  model: 'intercept-only' | 'hdd-only' | 'cdd-only' | 'hdd-cdd';
  heatingBalanceC: number | null;
  coolingBalanceC: number | null;
  coefficients: { intercept: number; perHdd: number; perCdd: number };
  /** Coefficients plus balance points (G14 counts a searched change point as a parameter). */
  p: number;
  adjustedR2: number;
  /** The candidates that qualified (positive, significant slopes), with their adjusted R². */
  qualified: number;
  /** Degree days of a day at the chosen balance points. */
  degreeDays: (meanC: number) => { hdd: number; cdd: number };
  predict: (meanC: number) => number;
};

const BALANCE_POINTS_F = Array.from({ length: 61 }, (_, i) => 30 + i);
const MIN_NONZERO_DAYS = 10;
const MIN_DEGREE_DAYS = 20;
const P_VALUE_LIMIT = 0.1;

/** CalTRACK 2.0 daily model selection over whole days (null with fewer than 10 days). */
export function caltrackDaily(days: CaltrackDay[]): CaltrackDailyModel | null {
  const n = days.length;
  if (n < 10) return null;
  const y = days.map((d) => d.actualKwh);
  const meanY = y.reduce((a, b) => a + b, 0) / n;
  const ssTot = y.reduce((s, v) => s + (v - meanY) ** 2, 0);
  const tempsF = days.map((d) => toF(d.meanC));
  const hddAt = (bp: number) => tempsF.map((t) => Math.max(0, bp - t));
  const cddAt = (bp: number) => tempsF.map((t) => Math.max(0, t - bp));
  const enough = (dd: number[]) => dd.filter((v) => v > 0).length >= MIN_NONZERO_DAYS && dd.reduce((a, b) => a + b, 0) >= MIN_DEGREE_DAYS;
  const tLimit = studentT(1 - P_VALUE_LIMIT, Math.max(1, n - 3));
  type Candidate = { model: CaltrackDailyModel['model']; h: number | null; c: number | null; beta: Float64Array; adjustedR2: number; k: number };
  let best: Candidate | null = null;
  let qualified = 0;
  const tryModel = (model: Candidate['model'], h: number | null, c: number | null, columns: number[][]) => {
    const rows = y.map((_, i) => [1, ...columns.map((col) => col[i])]);
    const { beta, used, inverseDiagonal } = weightedLeastSquares(rows, y, undefined, true);
    if (used.some((u) => !u)) return;
    let ssRes = 0;
    rows.forEach((x, i) => {
      const e = y[i] - x.reduce((s, v, j) => s + v * beta[j], 0);
      ssRes += e * e;
    });
    const k = rows[0].length;
    const sigma2 = ssRes / (n - k);
    // Every slope positive and significant (|t| above the two-sided 90 % quantile: p < 0.1).
    for (let j = 1; j < k; j += 1) {
      if (beta[j] <= 0) return;
      if (beta[j] / Math.sqrt(sigma2 * inverseDiagonal[j]) <= tLimit) return;
    }
    qualified += 1;
    const r2 = ssTot > 0 ? 1 - ssRes / ssTot : 0;
    const adjustedR2 = 1 - ((1 - r2) * (n - 1)) / (n - k);
    if (!best || adjustedR2 > best.adjustedR2) best = { model, h, c, beta, adjustedR2, k };
  };
  tryModel('intercept-only', null, null, []);
  const hdds = new Map(BALANCE_POINTS_F.map((bp) => [bp, hddAt(bp)]));
  const cdds = new Map(BALANCE_POINTS_F.map((bp) => [bp, cddAt(bp)]));
  const okH = BALANCE_POINTS_F.filter((bp) => enough(hdds.get(bp)!));
  const okC = BALANCE_POINTS_F.filter((bp) => enough(cdds.get(bp)!));
  for (const h of okH) tryModel('hdd-only', h, null, [hdds.get(h)!]);
  for (const c of okC) tryModel('cdd-only', null, c, [cdds.get(c)!]);
  for (const h of okH) for (const c of okC) if (c >= h) tryModel('hdd-cdd', h, c, [hdds.get(h)!, cdds.get(c)!]);
  const chosen = best as Candidate | null;
  if (!chosen) return null;
  const { h, c, beta } = chosen;
  const coefficients = { intercept: beta[0], perHdd: h !== null ? beta[1] : 0, perCdd: c !== null ? beta[h !== null ? 2 : 1] : 0 };
  // Degree days in °F-days (the published method's unit): the coefficients are kWh per °F-day.
  const degreeDays = (meanC: number) => {
    const t = toF(meanC);
    return { hdd: h !== null ? Math.max(0, h - t) : 0, cdd: c !== null ? Math.max(0, t - c) : 0 };
  };
  return {
    model: chosen.model,
    heatingBalanceC: h !== null ? round(toC(h), 2) : null,
    coolingBalanceC: c !== null ? round(toC(c), 2) : null,
    coefficients,
    p: chosen.k + (h !== null ? 1 : 0) + (c !== null ? 1 : 0),
    adjustedR2: chosen.adjustedR2,
    qualified,
    degreeDays,
    predict: (meanC: number) => {
      const dd = degreeDays(meanC);
      return coefficients.intercept + coefficients.perHdd * dd.hdd + coefficients.perCdd * dd.cdd;
    },
  };
}

// --- CalTRACK hourly (TOWT) --------------------------------------------------------------------------------------

export type CaltrackHour = { tow: number; month: number; temperatureC: number; actualKwh: number };
export type CaltrackHourlyModel = {
  /** Columns of one month's model (168 times of week + the temperature components), the most any prediction rests on. */
  p: number;
  segments: number;
  occupiedShare: number;
  predict: (hour: Omit<CaltrackHour, 'actualKwh'>) => number;
};

const BIN_ENDPOINTS_F = [30, 45, 55, 65, 75, 90];
const MIN_BIN_HOURS = 20;
const OCCUPANCY_THRESHOLD = 0.65;

/** Piecewise-linear temperature components on the endpoints (Mathieu et al.): the first min(T, B1), the last max(0, T − Bn). */
function components(tF: number, endpoints: number[]): number[] {
  const out = new Array<number>(endpoints.length + 1).fill(0);
  if (!endpoints.length) return [tF];
  out[0] = Math.min(tF, endpoints[0]);
  for (let i = 1; i < endpoints.length; i += 1) out[i] = tF > endpoints[i - 1] ? Math.min(tF - endpoints[i - 1], endpoints[i] - endpoints[i - 1]) : 0;
  out[endpoints.length] = Math.max(0, tF - endpoints[endpoints.length - 1]);
  return out;
}

/** Endpoints with sparse bins merged: a bin with fewer than MIN_BIN_HOURS hours loses its upper (or, last, its lower) endpoint. */
function mergedEndpoints(tempsF: number[]): number[] {
  let endpoints = [...BIN_ENDPOINTS_F];
  for (;;) {
    const counts = new Array<number>(endpoints.length + 1).fill(0);
    for (const t of tempsF) {
      let bin = 0;
      while (bin < endpoints.length && t > endpoints[bin]) bin += 1;
      counts[bin] += 1;
    }
    const sparse = counts.findIndex((count) => count < MIN_BIN_HOURS);
    if (sparse < 0 || !endpoints.length) return endpoints;
    endpoints = endpoints.filter((_, i) => i !== (sparse < endpoints.length ? sparse : endpoints.length - 1));
  }
}

/** The CalTRACK hourly model over whole baseline hours (null when there are too few hours for a segment). */
export function caltrackHourly(hours: CaltrackHour[]): CaltrackHourlyModel | null {
  if (hours.length < 168 * 2) return null;
  type Segment = { endpoints: number[]; occupied: Uint8Array; beta: Float64Array };
  const segments = new Map<number, Segment>();
  let p = 0;
  let occupied = 0;
  for (let month = 1; month <= 12; month += 1) {
    const before = month === 1 ? 12 : month - 1;
    const next = month === 12 ? 1 : month + 1;
    const weightOf = (h: CaltrackHour) => (h.month === month ? 1 : h.month === before || h.month === next ? 0.5 : 0);
    const inSegment = hours.filter((h) => weightOf(h) > 0);
    if (inSegment.length < 168) continue;
    const w = inSegment.map(weightOf);
    const tF = inSegment.map((h) => toF(h.temperatureC));
    const y = inSegment.map((h) => h.actualKwh);
    // Occupancy: a weighted HDD50/CDD65 fit; a time of week is occupied when > 65 % of its hours lie above it.
    const simple = weightedLeastSquares(
      tF.map((t) => [1, Math.max(0, 50 - t), Math.max(0, t - 65)]),
      y,
      w,
    ).beta;
    const above = new Float64Array(168);
    const all = new Float64Array(168);
    inSegment.forEach((h, i) => {
      const fitted = simple[0] + simple[1] * Math.max(0, 50 - tF[i]) + simple[2] * Math.max(0, tF[i] - 65);
      all[h.tow] += 1;
      if (y[i] > fitted) above[h.tow] += 1;
    });
    const occ = new Uint8Array(168);
    for (let tow = 0; tow < 168; tow += 1) occ[tow] = all[tow] > 0 && above[tow] / all[tow] > OCCUPANCY_THRESHOLD ? 1 : 0;
    const endpoints = mergedEndpoints(tF);
    const k = endpoints.length + 1;
    const width = 168 + 2 * k;
    const rows = inSegment.map((h, i) => {
      const x = new Float64Array(width);
      x[h.tow] = 1;
      const offset = 168 + (occ[h.tow] ? 0 : k);
      components(tF[i], endpoints).forEach((v, j) => {
        x[offset + j] = v;
      });
      return x;
    });
    const fit = weightedLeastSquares(rows, y, w);
    segments.set(month, { endpoints, occupied: occ, beta: fit.beta });
    p = Math.max(p, fit.columns);
    occupied += occ.reduce((a, b) => a + b, 0);
  }
  if (!segments.size) return null;
  return {
    p,
    segments: segments.size,
    occupiedShare: occupied / (168 * segments.size),
    predict: (hour) => {
      const segment = segments.get(hour.month);
      if (!segment) return NaN;
      const k = segment.endpoints.length + 1;
      const offset = 168 + (segment.occupied[hour.tow] ? 0 : k);
      let value = segment.beta[hour.tow];
      components(toF(hour.temperatureC), segment.endpoints).forEach((v, j) => {
        value += v * segment.beta[offset + j];
      });
      return value;
    },
  };
}
