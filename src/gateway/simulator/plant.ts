// The simulated HVAC plant (issue 54), opt-in (EMS_SIM_EQUIPMENT=on): one air handler with an economiser, two VAV zones,
// a chiller and an electric hot-water loop, controlled as G36 describes (supply air to setpoint, free cooling first),
// with seeded, injectable faults (a leaking heating valve, a stuck damper, a schedule override, a drifting sensor)
// whose energy goes into the plant's meters. The plant is computed twice per 5-minute slot, with and without the
// faults: the difference is the energy each fault injected, the known answer detection and waste are tested against.
import type { Climate } from './climate.ts';
import { round } from '../../platform/numbers.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const PLANT_SLOT_MS = 5 * 60_000;
/** Counters count from here (before it they read 0): meters installed with the plant. */
export const PLANT_EPOCH = Date.UTC(2025, 0, 1);

/** The plant's rated figures (the fault-detection library's AHU defaults are these). */
export const PLANT = {
  airKwPerK: 6.03,
  fanKw: 7.2,
  oaMin: 0.2,
  heatingCapacityKw: 150,
  coolingCapacityKw: 200,
  boilerEff: 0.98,
  chillerCop: 3.5,
  returnAirC: 22,
} as const;
const FAN_HEAT_K = PLANT.fanKw / PLANT.airKwPerK;

export const FAULT_KINDS = ['leaking-valve', 'stuck-damper', 'schedule-override', 'drifting-sensor'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/**
 * An injected fault over [from, to): `magnitude` is the leak's share of the heating coil (default 0.15), the damper's
 * stuck position (0.8), or the supply air sensor's drift in K per day (signed, default −1, at most 4 K either way); unused for the override.
 */
export type InjectedFault = { kind: FaultKind; from: number; to: number; magnitude?: number };

type State = {
  occ: number;
  fan: number;
  oat: number;
  rat: number;
  mat: number;
  sat: number;
  satSensor: number;
  satsp: number;
  oad: number;
  hcv: number;
  ccv: number;
  hwOn: number;
  heatKw: number;
  coolKw: number;
  /** Electric kW: fan, boiler, chiller. */
  fanKw: number;
  boilerKw: number;
  chillerKw: number;
};

/** The plant's points: code, name, unit, kind. Meters are energy counters; the rest are read as the plant is. */
export const PLANT_POINTS: Array<{ code: string; name: string; unit: string; kind: string }> = [
  { code: 'ahu1.oat', name: 'AHU 1 outside air temperature', unit: '°C', kind: 'temperature' },
  { code: 'ahu1.rat', name: 'AHU 1 return air temperature', unit: '°C', kind: 'temperature' },
  { code: 'ahu1.mat', name: 'AHU 1 mixed air temperature', unit: '°C', kind: 'temperature' },
  { code: 'ahu1.sat', name: 'AHU 1 supply air temperature', unit: '°C', kind: 'temperature' },
  { code: 'ahu1.satsp', name: 'AHU 1 supply air temperature setpoint', unit: '°C', kind: 'setpoint' },
  { code: 'ahu1.oad', name: 'AHU 1 outside air damper', unit: '%', kind: 'position' },
  { code: 'ahu1.hcv', name: 'AHU 1 heating valve', unit: '%', kind: 'position' },
  { code: 'ahu1.ccv', name: 'AHU 1 cooling valve', unit: '%', kind: 'position' },
  { code: 'ahu1.sf', name: 'AHU 1 supply fan status', unit: '', kind: 'status' },
  { code: 'ahu1.occ', name: 'AHU 1 occupancy schedule', unit: '', kind: 'status' },
  { code: 'ahu1.sf.kw', name: 'AHU 1 supply fan power', unit: 'kW', kind: 'power' },
  { code: 'vav1.zat', name: 'VAV 1 zone temperature', unit: '°C', kind: 'temperature' },
  { code: 'vav1.zatsp', name: 'VAV 1 zone setpoint', unit: '°C', kind: 'setpoint' },
  { code: 'vav1.occ', name: 'VAV 1 occupancy', unit: '', kind: 'status' },
  { code: 'vav2.zat', name: 'VAV 2 zone temperature', unit: '°C', kind: 'temperature' },
  { code: 'vav2.zatsp', name: 'VAV 2 zone setpoint', unit: '°C', kind: 'setpoint' },
  { code: 'vav2.occ', name: 'VAV 2 occupancy', unit: '', kind: 'status' },
  { code: 'chiller1.status', name: 'Chiller 1 run status', unit: '', kind: 'status' },
  { code: 'chiller1.chwst', name: 'Chiller 1 chilled water supply temperature', unit: '°C', kind: 'temperature' },
  { code: 'chiller1.chwrt', name: 'Chiller 1 chilled water return temperature', unit: '°C', kind: 'temperature' },
  { code: 'chiller1.kw', name: 'Chiller 1 power', unit: 'kW', kind: 'power' },
  { code: 'hw.pump', name: 'Hot-water loop pump status', unit: '', kind: 'status' },
  { code: 'hw.hwst', name: 'Hot-water supply temperature', unit: '°C', kind: 'temperature' },
  { code: 'hw.hwrt', name: 'Hot-water return temperature', unit: '°C', kind: 'temperature' },
  { code: 'hw.boiler.kw', name: 'Electric boiler power', unit: 'kW', kind: 'power' },
  { code: 'meter.ahu1.kwh', name: 'AHU 1 fan energy', unit: 'kWh', kind: 'energy' },
  { code: 'meter.boiler.kwh', name: 'Electric boiler energy', unit: 'kWh', kind: 'energy' },
  { code: 'meter.chiller1.kwh', name: 'Chiller 1 energy', unit: 'kWh', kind: 'energy' },
];
const METERS: Record<string, (s: State) => number> = {
  'meter.ahu1.kwh': (s) => s.fanKw,
  'meter.boiler.kwh': (s) => s.boilerKw,
  'meter.chiller1.kwh': (s) => s.chillerKw,
};

/** Deterministic noise in [-1, 1] for a code and a slot. */
function noise(code: string, slot: number): number {
  let h = 2166136261 ^ slot;
  for (let i = 0; i < code.length; i++) h = Math.imul(h ^ code.charCodeAt(i), 16777619);
  h = Math.imul(h ^ (h >>> 15), 2246822507);
  h ^= h >>> 13;
  return ((h >>> 0) / 0xffffffff) * 2 - 1;
}

const clamp = (value: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, value));

export class Plant {
  readonly faults: InjectedFault[];
  /** Counter values (kWh per meter, in METERS order) at the start of each UTC day from the epoch. */
  private readonly dayStart = new Map<number, Float64Array>();

  constructor(
    private readonly climate: Climate,
    faults: InjectedFault[] = [],
  ) {
    this.faults = [...faults];
  }

  has(code: string): boolean {
    return PLANT_POINTS.some((point) => point.code === code);
  }

  /** Adds a fault; counters from its day on are computed again. */
  inject(fault: InjectedFault): void {
    this.faults.push(fault);
    this.last = undefined;
    const fromDay = Math.floor(fault.from / DAY_MS);
    for (const day of this.dayStart.keys()) if (day > fromDay) this.dayStart.delete(day);
  }

  private active(kind: FaultKind, t: number): InjectedFault | undefined {
    return this.faults.find((fault) => fault.kind === kind && t >= fault.from && t < fault.to);
  }

  /** The occupancy schedule: working days (the climate's calendar, UTC) 06:00–19:00. */
  scheduled(t: number): boolean {
    const hour = (t - Math.floor(t / DAY_MS) * DAY_MS) / HOUR_MS;
    return this.climate.dayType(t) === 'working' && hour >= 6 && hour < 19;
  }

  /** The last slot's faulty state: a collection reads some twenty points of the same slot. */
  private last: { t: number; state: State } | undefined;

  /** The plant in slot t (its start), with the faults when `faulty`. */
  state(t: number, faulty = true): State {
    if (!faulty) return this.compute(t, false);
    if (this.last?.t !== t) this.last = { t, state: this.compute(t, true) };
    return this.last.state;
  }

  private compute(t: number, faulty: boolean): State {
    const occ = this.scheduled(t) ? 1 : 0;
    const override = faulty && this.active('schedule-override', t);
    const fan = occ || override ? 1 : 0;
    const oat = this.climate.outdoorC(t);
    const rat = PLANT.returnAirC + 0.5 * this.climate.occupancy(t);
    const drift = faulty ? this.active('drifting-sensor', t) : undefined;
    // Signed K per day (default −1: the sensor reads low, so the coils heat the real air above its setpoint), at most 4 K.
    const rate = drift?.magnitude ?? -1;
    const bias = drift ? Math.sign(rate) * Math.min(4, (Math.abs(rate) * (t - drift.from)) / DAY_MS) : 0;
    const satsp = oat < 12 ? 20 : 14;
    if (!fan) {
      return {
        occ,
        fan,
        oat,
        rat: 20,
        mat: 20,
        sat: 20,
        satSensor: 20 + bias,
        satsp,
        oad: 0,
        hcv: 0,
        ccv: 0,
        hwOn: 0,
        heatKw: 0,
        coolKw: 0,
        fanKw: 0,
        boilerKw: 0,
        chillerKw: 0,
      };
    }
    // The controller brings its (possibly biased) reading to the setpoint, so the real air goes to setpoint − bias.
    const target = satsp - bias;
    const stuck = faulty ? this.active('stuck-damper', t) : undefined;
    const hwOn = oat < 18 ? 1 : 0;
    const leak = faulty && hwOn ? this.active('leaking-valve', t) : undefined;
    const leakKw = leak ? (leak.magnitude ?? 0.15) * PLANT.heatingCapacityKw : 0;
    // Free cooling first: the damper opens until the air off the coils (fan heat and any leak in it) meets the target.
    let f: number = PLANT.oaMin;
    if (oat < rat - 1) f = clamp((target - FAN_HEAT_K - leakKw / PLANT.airKwPerK - rat) / (oat - rat), PLANT.oaMin, 1);
    if (stuck) f = stuck.magnitude ?? 0.8;
    const mat = f * oat + (1 - f) * rat;
    const need = PLANT.airKwPerK * (target - (mat + FAN_HEAT_K)) - leakKw;
    // A dead band of 0.1 kW: the damper's exact balance leaves a rounding error, not a load that starts a coil.
    const heatKw = need > 0.1 && hwOn ? Math.min(need, PLANT.heatingCapacityKw) : 0;
    const coolKw = need < -0.1 ? Math.min(-need, PLANT.coolingCapacityKw) : 0;
    const sat = mat + FAN_HEAT_K + (heatKw + leakKw - coolKw) / PLANT.airKwPerK;
    return {
      occ,
      fan,
      oat,
      rat,
      mat,
      sat,
      satSensor: sat + bias,
      satsp,
      oad: f * 100,
      hcv: (heatKw / PLANT.heatingCapacityKw) * 100,
      ccv: (coolKw / PLANT.coolingCapacityKw) * 100,
      hwOn,
      heatKw: heatKw + leakKw,
      coolKw,
      fanKw: PLANT.fanKw,
      boilerKw: (heatKw + leakKw) / PLANT.boilerEff,
      chillerKw: coolKw / PLANT.chillerCop,
    };
  }

  /** A point's value at t, as the gateway reads it (sensor noise included). */
  value(code: string, t: number): number {
    if (code in METERS) return round(this.counter(code, t), 3);
    const slot = Math.floor(t / PLANT_SLOT_MS);
    const s = this.state(slot * PLANT_SLOT_MS);
    const n = (amplitude: number) => amplitude * noise(code, slot);
    switch (code) {
      case 'ahu1.oat':
        return round(s.oat + n(0.1), 2);
      case 'ahu1.rat':
        return round(s.rat + n(0.1), 2);
      case 'ahu1.mat':
        return round(s.mat + n(0.1), 2);
      case 'ahu1.sat':
        return round(s.satSensor + n(0.1), 2);
      case 'ahu1.satsp':
        return s.satsp;
      case 'ahu1.oad':
        return round(s.oad, 1);
      case 'ahu1.hcv':
        return round(s.hcv, 1);
      case 'ahu1.ccv':
        return round(s.ccv, 1);
      case 'ahu1.sf':
        return s.fan;
      case 'ahu1.occ':
      case 'vav1.occ':
      case 'vav2.occ':
        return s.occ;
      case 'ahu1.sf.kw':
        return round(s.fanKw * (1 + n(0.02)), 2);
      case 'vav1.zatsp':
      case 'vav2.zatsp':
        return 22;
      case 'vav1.zat':
      case 'vav2.zat':
        return round((s.fan ? 22 : 19) + n(0.3), 2);
      case 'chiller1.status':
        return s.coolKw > 0 ? 1 : 0;
      case 'chiller1.chwst':
        return round(7 + n(0.1), 2);
      case 'chiller1.chwrt':
        return round(7 + (s.coolKw > 0 ? 5 * (0.6 + (0.4 * s.coolKw) / PLANT.coolingCapacityKw) : 0.5) + n(0.1), 2);
      case 'chiller1.kw':
        return round(s.chillerKw, 2);
      case 'hw.pump':
        return s.hwOn;
      case 'hw.hwst':
        return round((s.hwOn ? 60 : 30) + n(0.2), 2);
      case 'hw.hwrt':
        return round((s.hwOn ? 60 - (10 * s.heatKw) / PLANT.heatingCapacityKw : 30) + n(0.2), 2);
      case 'hw.boiler.kw':
        return round(s.boilerKw, 2);
      default:
        return Number.NaN;
    }
  }

  /** The plant's total electric power at t (kW): what it adds to the main incomer. */
  kw(t: number): number {
    const s = this.state(Math.floor(t / PLANT_SLOT_MS) * PLANT_SLOT_MS);
    return s.fanKw + s.boilerKw + s.chillerKw;
  }

  /** kWh a plant meter counted from the epoch to t: the exact sum of its slots' power. */
  counter(code: string, t: number): number {
    const index = Object.keys(METERS).indexOf(code);
    return this.counters(t)[index] ?? 0;
  }

  /** All three counters at t; their sum is what the plant added to the main incomer. */
  counters(t: number): Float64Array {
    if (t <= PLANT_EPOCH) return new Float64Array(3);
    const day = Math.floor(t / DAY_MS);
    const out = Float64Array.from(this.startOfDay(day));
    this.addSlots(out, day * DAY_MS, t, true);
    return out;
  }

  /**
   * Energy (kWh, all plant meters) the faults added over [from, to): the faulty plant less the healthy one. `gross`:
   * only the 5-minute slots where the faults added energy, none netted against slots where they saved some (a supply
   * air sensor reading low also cools less than asked: a saving the meters see, paid for in the zones' comfort, which
   * the plant does not model).
   */
  injectedKwh(from: number, to: number, gross = false): number {
    if (!gross) return this.sumKwh(from, to, true) - this.sumKwh(from, to, false);
    let added = 0;
    for (let slot = Math.floor(from / PLANT_SLOT_MS); slot * PLANT_SLOT_MS < to; slot++) {
      const start = Math.max(from, slot * PLANT_SLOT_MS);
      const end = Math.min(to, (slot + 1) * PLANT_SLOT_MS);
      if (end > start) added += Math.max(0, this.sumKwh(start, end, true) - this.sumKwh(start, end, false));
    }
    return added;
  }

  private sumKwh(from: number, to: number, faulty: boolean): number {
    const sums = new Float64Array(3);
    this.addSlots(sums, from, to, faulty);
    return sums[0]! + sums[1]! + sums[2]!;
  }

  private startOfDay(day: number): Float64Array {
    const epochDay = Math.floor(PLANT_EPOCH / DAY_MS);
    if (day <= epochDay) return new Float64Array(3);
    const kept = this.dayStart.get(day);
    if (kept) return kept;
    // The nearest day kept before this one, then whole days forward.
    let from = day - 1;
    while (from > epochDay && !this.dayStart.has(from)) from--;
    let sums = Float64Array.from(this.dayStart.get(from) ?? new Float64Array(3));
    for (let d = from; d < day; d++) {
      this.addSlots(sums, d * DAY_MS, (d + 1) * DAY_MS, true);
      this.dayStart.set(d + 1, (sums = Float64Array.from(sums)));
    }
    return sums;
  }

  /** Adds each meter's kWh over [from, to) into sums (slots cut at the ends). */
  private addSlots(sums: Float64Array, from: number, to: number, faulty: boolean): void {
    const meters = Object.values(METERS);
    for (let slot = Math.floor(from / PLANT_SLOT_MS); slot * PLANT_SLOT_MS < to; slot++) {
      const start = Math.max(from, slot * PLANT_SLOT_MS);
      const end = Math.min(to, (slot + 1) * PLANT_SLOT_MS);
      if (end <= start) continue;
      const s = this.state(slot * PLANT_SLOT_MS, faulty);
      const hours = (end - start) / HOUR_MS;
      for (const [i, power] of meters.entries()) sums[i]! += power(s) * hours;
    }
  }
}
