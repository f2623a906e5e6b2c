// The simulated building's load model: a seeded, deterministic outdoor climate, an occupancy schedule with weekends and
// holidays, and four load profiles (base, occupied, heating, cooling) that every simulated meter's load is a mix of.
// Energy counters are exact integrals of the same piecewise-constant load, so a counter and its power point agree.

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const YEAR_MS = 365.2425 * DAY_MS;
/** The load is constant within a 5-minute slot: fine enough for a morning ramp to rise within a 15-minute window. */
export const SLOT_MS = 5 * 60_000;
const SLOTS = DAY_MS / SLOT_MS;
/** Counters start from a plausible reading, not zero: the meters were installed years ago. */
export const COUNTER_EPOCH = Date.UTC(2020, 0, 1);

/** How a meter's load (kW) is made: base day and night, extra while occupied (× occupancy 0…1), per K of heating and cooling. */
export type LoadShape = { base: number; occupied: number; heatingPerK: number; coolingPerK: number };

/** Heating runs below this outdoor temperature, cooling above the other (°C); the building's balance points. */
export const HEATING_BASE_C = 15.5;
export const COOLING_BASE_C = 21;
/** Fixed-date public holidays (MM-DD) the building is closed on, as in Belgium; the simulated clock is UTC. */
export const HOLIDAYS = ['01-01', '05-01', '07-21', '08-15', '11-01', '11-11', '12-25', '12-26'];

/** Deterministic value in [-1, 1] for a seed and an integer. */
function hash(seed: number, n: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(n, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  h ^= h >>> 16;
  return ((h >>> 0) / 0xffffffff) * 2 - 1;
}

/** Day-to-day weather: knots every 2 days, joined by a cosine so the temperature never jumps. */
const WEATHER_KNOT_MS = 2 * DAY_MS;

export class Climate {
  /** Integral of each profile from the counter epoch to the start of day d (index from the epoch), kWh per unit. */
  private readonly cumulative: Float64Array[] = [new Float64Array(4)];
  private readonly before: Float64Array[] = [new Float64Array(4)];
  /** Prefix sums of the four profiles within a day, per slot; a few recent days kept. */
  private readonly dayPrefix = new Map<number, Float64Array>();
  /** The day type of the last UTC day asked about: a day's 288 slots ask 288 times. */
  private lastDay = Number.NaN;
  private lastWorking = false;

  constructor(readonly seed = 2026) {}

  /** Outdoor air temperature (°C) at t: season (coldest around 20 January), the weather of the week, the hour of the day. */
  outdoorC(t: number): number {
    const season = 10.5 - 7.5 * Math.cos((2 * Math.PI * (t - Date.UTC(2020, 0, 20))) / YEAR_MS);
    const k = Math.floor(t / WEATHER_KNOT_MS);
    const f = (t - k * WEATHER_KNOT_MS) / WEATHER_KNOT_MS;
    const w = (1 - Math.cos(Math.PI * f)) / 2;
    const weather = 4 * ((1 - w) * hash(this.seed, k) + w * hash(this.seed, k + 1));
    const hour = (((t % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS;
    const diurnal = 3.5 * Math.cos((2 * Math.PI * (hour - 15)) / 24);
    return season + weather + diurnal;
  }

  /** 'working', 'weekend' or 'holiday' for the UTC day t falls in. */
  dayType(t: number): 'working' | 'weekend' | 'holiday' {
    const date = new Date(t);
    if (HOLIDAYS.includes(date.toISOString().slice(5, 10))) return 'holiday';
    const weekday = date.getUTCDay();
    return weekday === 0 || weekday === 6 ? 'weekend' : 'working';
  }

  /** Share of the building in use (0…1): working days 08:00–17:00 with an hour's ramp either side, busier on some days than others. */
  occupancy(t: number): number {
    const day = Math.floor(t / DAY_MS);
    if (day !== this.lastDay) {
      this.lastDay = day;
      this.lastWorking = this.dayType(t) === 'working';
    }
    if (!this.lastWorking) return 0;
    const hour = (t - day * DAY_MS) / HOUR_MS;
    const ramp = hour < 6 || hour >= 19 ? 0 : hour < 8 ? (hour - 6) / 2 : hour < 17 ? 1 : (19 - hour) / 2;
    const busy = 0.9 + 0.1 * hash(this.seed + 1, day);
    return ramp * busy;
  }

  /** The four profiles at the middle of t's slot: [1, occupancy, heating K, cooling K]. */
  private profiles(slotStart: number, into: Float64Array, offset: number): void {
    const mid = slotStart + SLOT_MS / 2;
    const outdoor = this.outdoorC(mid);
    into[offset] = 1;
    into[offset + 1] = this.occupancy(mid);
    into[offset + 2] = Math.max(0, HEATING_BASE_C - outdoor);
    into[offset + 3] = Math.max(0, outdoor - COOLING_BASE_C);
  }

  /** A meter's load (kW) at t. */
  load(shape: LoadShape, t: number): number {
    const p = new Float64Array(4);
    this.profiles(Math.floor(t / SLOT_MS) * SLOT_MS, p, 0);
    return shape.base * p[0] + shape.occupied * p[1] + shape.heatingPerK * p[2] + shape.coolingPerK * p[3];
  }

  /** A meter's energy (kWh) from the counter epoch to t: the exact integral of load(). */
  energy(shape: LoadShape, t: number): number {
    const e = this.integral(t);
    return shape.base * e[0] + shape.occupied * e[1] + shape.heatingPerK * e[2] + shape.coolingPerK * e[3];
  }

  /** Each profile's integral (unit·h) from the epoch to t. */
  integral(t: number): Float64Array {
    const day = Math.floor((t - COUNTER_EPOCH) / DAY_MS);
    const dayStart = COUNTER_EPOCH + day * DAY_MS;
    const prefix = this.prefix(day);
    const slot = Math.floor((t - dayStart) / SLOT_MS);
    const within = (t - dayStart - slot * SLOT_MS) / HOUR_MS;
    const base = this.atDayStart(day);
    const out = new Float64Array(4);
    for (let k = 0; k < 4; k += 1) {
      const rate = (prefix[(slot + 1) * 4 + k] - prefix[slot * 4 + k]) / (SLOT_MS / HOUR_MS);
      out[k] = base[k] + prefix[slot * 4 + k] + rate * within;
    }
    return out;
  }

  /** Prefix sums (unit·h) of the profiles over a day's slots: SLOTS + 1 entries of 4. */
  private prefix(day: number): Float64Array {
    let prefix = this.dayPrefix.get(day);
    if (prefix) return prefix;
    prefix = new Float64Array((SLOTS + 1) * 4);
    const p = new Float64Array(4);
    const start = COUNTER_EPOCH + day * DAY_MS;
    for (let s = 0; s < SLOTS; s += 1) {
      this.profiles(start + s * SLOT_MS, p, 0);
      for (let k = 0; k < 4; k += 1) prefix[(s + 1) * 4 + k] = prefix[s * 4 + k] + (p[k] * SLOT_MS) / HOUR_MS;
    }
    if (this.dayPrefix.size >= 64) this.dayPrefix.delete(this.dayPrefix.keys().next().value!);
    this.dayPrefix.set(day, prefix);
    return prefix;
  }

  /** Integrals from the epoch to the start of day d, built up day by day once and kept (3,000 days: 24 kB). */
  private atDayStart(day: number): Float64Array {
    if (day >= 0) {
      while (this.cumulative.length <= day) {
        const d = this.cumulative.length - 1;
        const totals = this.dayTotals(d);
        this.cumulative.push(this.cumulative[d].map((value, k) => value + totals[k]));
      }
      return this.cumulative[day];
    }
    // Before the epoch the counters run backwards: negative integrals, still exact.
    while (this.before.length <= -day) {
      const d = -this.before.length;
      const totals = this.dayTotals(d);
      this.before.push(this.before[-d - 1].map((value, k) => value - totals[k]));
    }
    return this.before[-day];
  }

  private dayTotals(day: number): Float64Array {
    const p = new Float64Array(4);
    const totals = new Float64Array(4);
    const start = COUNTER_EPOCH + day * DAY_MS;
    for (let s = 0; s < SLOTS; s += 1) {
      this.profiles(start + s * SLOT_MS, p, 0);
      for (let k = 0; k < 4; k += 1) totals[k] += (p[k] * SLOT_MS) / HOUR_MS;
    }
    return totals;
  }
}
