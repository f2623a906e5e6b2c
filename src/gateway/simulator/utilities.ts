// The simulated building's other utilities (issue 26): a gas meter driven by the heating load, a water meter following
// occupancy, a rooftop PV array with a daily sun curve and clouds, and the grid connection's export counter. Every
// counter is an exact integral of a rate that is constant within a 5-minute slot, so readings never depend on when
// they are asked for, and import − export + generation equals the building's consumption at every instant.
import { Climate, SLOT_MS, type LoadShape } from './climate.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const SLOTS = DAY_MS / SLOT_MS;
/** The utility counters were fitted later than the electricity meters: fewer days to integrate on the first read. */
export const UTILITY_EPOCH = Date.UTC(2025, 0, 1);

/** The boiler's gas use in kW of gas: hot water all day, more while occupied, and per K below the heating base. */
const GAS_BURN: LoadShape = { base: 4, occupied: 10, heatingPerK: 14, coolingPerK: 0 };
/** kWh of gas per m³ the simulated meter's volume converts at (close to the seeded calorific version's 11.25). */
export const SIM_GAS_KWH_PER_M3 = 11.25;
/** Water in m³ per hour: a night trickle (cisterns, cooling-tower make-up) and washrooms and kitchen while occupied. */
const WATER_USE: LoadShape = { base: 0.05, occupied: 1.6, heatingPerK: 0, coolingPerK: 0 };
/** The roof array's peak output (kWp): above the building's weekend base load, so sunny weekends export. */
export const PV_PEAK_KW = 150;

export type UtilityKind = 'gas' | 'water' | 'pv' | 'export';

/** Deterministic value in [0, 1] for a seed and an integer. */
function unit(seed: number, n: number): number {
  let h = Math.imul(seed ^ 0x27d4eb2d, 0x165667b1) ^ Math.imul(n, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca77);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae3d);
  h ^= h >>> 16;
  return (h >>> 0) / 0xffffffff;
}

/** A counter whose rate (per hour) is constant within each slot: its value at t is a sum of whole days, whole slots and a part. */
class SlotCounter {
  private readonly cumulative = new Map<number, number>();
  private readonly days = new Map<number, Float64Array>();

  constructor(private readonly rate: (slotStart: number) => number) {}

  at(t: number): number {
    const day = Math.floor((t - UTILITY_EPOCH) / DAY_MS);
    const dayStart = UTILITY_EPOCH + day * DAY_MS;
    const prefix = this.prefix(day);
    const slot = Math.min(SLOTS - 1, Math.floor((t - dayStart) / SLOT_MS));
    const within = (t - dayStart - slot * SLOT_MS) / HOUR_MS;
    return this.atDayStart(day) + prefix[slot] + this.rate(dayStart + slot * SLOT_MS) * within;
  }

  private prefix(day: number): Float64Array {
    let prefix = this.days.get(day);
    if (prefix) return prefix;
    prefix = new Float64Array(SLOTS + 1);
    const start = UTILITY_EPOCH + day * DAY_MS;
    for (let s = 0; s < SLOTS; s += 1) prefix[s + 1] = prefix[s] + (this.rate(start + s * SLOT_MS) * SLOT_MS) / HOUR_MS;
    if (this.days.size >= 16) this.days.delete(this.days.keys().next().value!);
    this.days.set(day, prefix);
    return prefix;
  }

  /** The counter at the start of a day: whole days from the epoch summed once and kept (backwards before the epoch). */
  private atDayStart(day: number): number {
    const kept = this.cumulative.get(day);
    if (kept !== undefined) return kept;
    let nearest = 0;
    let from = 0;
    for (const [d, value] of this.cumulative) if (Math.abs(day - d) < Math.abs(day - from)) [from, nearest] = [d, value];
    let value = nearest;
    if (day >= from) for (let d = from; d < day; d += 1) value += this.dayTotal(d);
    else for (let d = from - 1; d >= day; d -= 1) value -= this.dayTotal(d);
    if (this.cumulative.size > 5000) this.cumulative.clear();
    this.cumulative.set(day, value);
    return value;
  }

  private dayTotal(day: number): number {
    const start = UTILITY_EPOCH + day * DAY_MS;
    let total = 0;
    for (let s = 0; s < SLOTS; s += 1) total += (this.rate(start + s * SLOT_MS) * SLOT_MS) / HOUR_MS;
    return total;
  }
}

export class Utilities {
  private readonly counters: Record<UtilityKind, SlotCounter>;

  constructor(
    private readonly climate: Climate,
    /** The building's electrical load as one shape (the sum of the main incomer's loads). */
    private readonly mainShape: LoadShape,
  ) {
    this.counters = {
      gas: new SlotCounter((t) => climate.load(GAS_BURN, t) / SIM_GAS_KWH_PER_M3),
      water: new SlotCounter((t) => climate.load(WATER_USE, t)),
      pv: new SlotCounter((t) => this.pvKw(t)),
      // What the panels make beyond the building's load flows out to the grid.
      export: new SlotCounter((t) => Math.max(0, this.pvKw(t) - climate.load(this.mainShape, t))),
    };
  }

  /** A utility counter at t: m³ for gas and water, kWh for PV generation and export. */
  counter(kind: UtilityKind, t: number): number {
    return this.counters[kind].at(t);
  }

  /** The rate at t: m³/h for gas and water, kW for PV and export. */
  rate(kind: UtilityKind, t: number): number {
    const slot = Math.floor(t / SLOT_MS) * SLOT_MS;
    switch (kind) {
      case 'gas':
        return this.climate.load(GAS_BURN, slot) / SIM_GAS_KWH_PER_M3;
      case 'water':
        return this.climate.load(WATER_USE, slot);
      case 'pv':
        return this.pvKw(slot);
      case 'export':
        return Math.max(0, this.pvKw(slot) - this.climate.load(this.mainShape, slot));
    }
  }

  /**
   * PV output (kW) in t's slot: a half-sine between sunrise and sunset whose length and height follow the season
   * (about 51° N, solar noon at 12:00 UTC), times the slot's clouds: each day has a cloudiness, each hour its share of it.
   */
  pvKw(t: number): number {
    const slotStart = Math.floor(t / SLOT_MS) * SLOT_MS;
    const mid = slotStart + SLOT_MS / 2;
    const day = Math.floor(mid / DAY_MS);
    const season = Math.sin((2 * Math.PI * (((mid - Date.UTC(2020, 2, 20)) / DAY_MS) % 365.2425)) / 365.2425);
    const dayLength = 12 + 4.2 * season;
    const sunrise = 12 - dayLength / 2;
    const hour = (mid - day * DAY_MS) / HOUR_MS;
    if (hour <= sunrise || hour >= sunrise + dayLength) return 0;
    const sun = Math.sin((Math.PI * (hour - sunrise)) / dayLength) * (0.55 + 0.35 * season);
    const cloudiness = unit(2611, day) ** 1.5;
    const passing = unit(2612, Math.floor(mid / HOUR_MS));
    const clouds = 1 - 0.8 * cloudiness * (0.4 + 0.6 * passing);
    return PV_PEAK_KW * sun * clouds;
  }
}
