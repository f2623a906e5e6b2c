// The simulated building behind the gateway simulator: points whose values are functions of time, writable setpoints, alarms.
// Meter loads come from the climate model (climate.ts): weather-driven heating and cooling, occupancy, night base load.
import { Climate, type LoadShape } from './climate.ts';
import { Plant, PLANT_POINTS, type InjectedFault } from './plant.ts';
import { Utilities, type UtilityKind } from './utilities.ts';
import { round } from '../../platform/numbers.ts';

export type PointValue = number | boolean | string;
export type Quality = 'good' | 'forced' | 'bad';

type PointKind = 'energy' | 'power' | 'temperature' | 'humidity' | 'setpoint' | 'command' | 'position' | 'status';

type PointDefinition = {
  code: string;
  name: string;
  unit: string;
  kind: PointKind;
  /** energy/power: average load in kW; temperature/humidity: daily mean; setpoint/command: initial value. */
  base: number;
  /** Daily swing as a fraction of base (energy/power) or in units (temperature/humidity). */
  swing?: number;
  /** Hour of the daily peak. */
  peakHour?: number;
  /** Setpoint range a plain `set` accepts. */
  min?: number;
  max?: number;
  /** A zone temperature follows this setpoint. */
  follows?: string;
  /** The main incomer: the sum of the sub-meters' loads and the building's unmetered load. */
  main?: boolean;
  /** energy/power of a sub-meter: how its load is made (climate.ts). */
  shape?: LoadShape;
  /** The outdoor temperature: the climate's, not a daily sine. */
  outdoor?: boolean;
  /** A gas, water, PV or export point (utilities.ts). */
  utility?: UtilityKind;
  /** A point of the simulated HVAC plant (plant.ts), read from it. */
  plant?: true;
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const OMEGA = (2 * Math.PI) / DAY_MS;

/** Load shapes of the named loads: HVAC follows the weather, lighting the occupancy, the server room runs flat. */
const HVAC: LoadShape = { base: 12, occupied: 25, heatingPerK: 5, coolingPerK: 9 };
const LIGHTING: LoadShape = { base: 3, occupied: 35, heatingPerK: 0, coolingPerK: 0 };
const IT: LoadShape = { base: 37, occupied: 3, heatingPerK: 0, coolingPerK: 0 };

const POINTS: PointDefinition[] = [
  { code: 'meter.main.kwh', name: 'Main incomer energy', unit: 'kWh', kind: 'energy', base: 0, main: true },
  { code: 'meter.hvac.kwh', name: 'HVAC energy', unit: 'kWh', kind: 'energy', base: 0, shape: HVAC },
  { code: 'meter.lighting.kwh', name: 'Lighting energy', unit: 'kWh', kind: 'energy', base: 0, shape: LIGHTING },
  { code: 'meter.it.kwh', name: 'Server room energy', unit: 'kWh', kind: 'energy', base: 0, shape: IT },
  { code: 'meter.main.kw', name: 'Main incomer power', unit: 'kW', kind: 'power', base: 0, main: true },
  { code: 'meter.hvac.kw', name: 'HVAC power', unit: 'kW', kind: 'power', base: 0, shape: HVAC },
  { code: 'temp.outdoor', name: 'Outdoor temperature', unit: '°C', kind: 'temperature', base: 0, outdoor: true },
  { code: 'temp.zone1', name: 'Office floor 1 temperature', unit: '°C', kind: 'temperature', base: 0, swing: 0.6, peakHour: 16, follows: 'sp.zone1' },
  { code: 'temp.zone2', name: 'Office floor 2 temperature', unit: '°C', kind: 'temperature', base: 0, swing: 0.8, peakHour: 16, follows: 'sp.zone2' },
  { code: 'temp.serverroom', name: 'Server room temperature', unit: '°C', kind: 'temperature', base: 0, swing: 0.4, peakHour: 14, follows: 'sp.serverroom' },
  {
    code: 'temp.chw.supply',
    name: 'Chilled water supply temperature',
    unit: '°C',
    kind: 'temperature',
    base: 0,
    swing: 0.3,
    peakHour: 15,
    follows: 'sp.chw.supply',
  },
  { code: 'humidity.zone1', name: 'Office floor 1 relative humidity', unit: '%', kind: 'humidity', base: 45, swing: 6, peakHour: 6 },
  { code: 'sp.zone1', name: 'Office floor 1 setpoint', unit: '°C', kind: 'setpoint', base: 21.5, min: 16, max: 28 },
  { code: 'sp.zone2', name: 'Office floor 2 setpoint', unit: '°C', kind: 'setpoint', base: 22, min: 16, max: 28 },
  { code: 'sp.serverroom', name: 'Server room setpoint', unit: '°C', kind: 'setpoint', base: 23, min: 18, max: 27 },
  { code: 'sp.chw.supply', name: 'Chilled water supply setpoint', unit: '°C', kind: 'setpoint', base: 7, min: 5, max: 12 },
  { code: 'ahu1.run', name: 'Air handling unit 1 run command', unit: '', kind: 'command', base: 1, min: 0, max: 1 },
  // Issue 26: the other utilities. The main incomer above counts only what the site draws from the grid.
  { code: 'meter.gas.m3', name: 'Gas meter volume', unit: 'm³', kind: 'energy', base: 0, utility: 'gas' },
  { code: 'meter.water.m3', name: 'Water meter volume', unit: 'm³', kind: 'energy', base: 0, utility: 'water' },
  { code: 'meter.pv.kwh', name: 'PV generation energy', unit: 'kWh', kind: 'energy', base: 0, utility: 'pv' },
  { code: 'meter.pv.kw', name: 'PV generation power', unit: 'kW', kind: 'power', base: 0, utility: 'pv' },
  { code: 'meter.export.kwh', name: 'Grid export energy', unit: 'kWh', kind: 'energy', base: 0, utility: 'export' },
];

/** What the main incomer carries beyond its sub-meters (plug loads, lifts): "rest of building" = main − sub-meters. */
const UNMETERED: PointDefinition = {
  code: 'unmetered',
  name: 'Unmetered load',
  unit: 'kWh',
  kind: 'energy',
  base: 0,
  shape: { base: 14, occupied: 55, heatingPerK: 0, coolingPerK: 0 },
};
/** The built-in sub-meters; EMS_SIM_METERS beyond them adds tenant sub-meters meter.sub.NNN.kwh. */
export const DEFAULT_SUB_METERS = 3;
const NAMED_SUBS = ['meter.hvac.kwh', 'meter.lighting.kwh', 'meter.it.kwh'];

/** Extra sub-meters: small tenant loads with varied shapes, the same for a given index on every start. */
function tenantMeters(count: number): PointDefinition[] {
  return Array.from({ length: Math.max(0, count - NAMED_SUBS.length) }, (_, i) => {
    const n = String(i + 1).padStart(3, '0');
    const size = 2 + ((i * 7) % 13);
    const shape = {
      base: size * (0.3 + ((i * 3) % 5) / 10),
      occupied: size * (0.4 + ((i * 5) % 7) / 10),
      heatingPerK: (size * (i % 3)) / 20,
      coolingPerK: (size * ((i + 1) % 3)) / 20,
    };
    return { code: `meter.sub.${n}.kwh`, name: `Tenant sub-meter ${n}`, unit: 'kWh', kind: 'energy', base: 0, shape };
  });
}

export type AlarmConfig = {
  id: number;
  code: string;
  condition: 'above' | 'below';
  threshold: number;
  level: 'info' | 'warning' | 'critical';
  enabled: boolean;
  message: string;
};
export type Alarm = {
  id: number;
  code: string;
  level: AlarmConfig['level'];
  message: string;
  state: 'active' | 'cleared';
  raisedAt: string;
  clearedAt: string | null;
};

const ALARM_CONFIGS: AlarmConfig[] = [
  { id: 1, code: 'temp.serverroom', condition: 'above', threshold: 27, level: 'critical', enabled: true, message: 'Server room temperature above 27 °C' },
  { id: 2, code: 'temp.zone1', condition: 'above', threshold: 26, level: 'warning', enabled: true, message: 'Office floor 1 too warm' },
  { id: 3, code: 'temp.zone2', condition: 'below', threshold: 17, level: 'warning', enabled: true, message: 'Office floor 2 too cold' },
  { id: 4, code: 'temp.chw.supply', condition: 'above', threshold: 11, level: 'warning', enabled: true, message: 'Chilled water supply too warm' },
  { id: 5, code: 'meter.main.kw', condition: 'above', threshold: 320, level: 'info', enabled: false, message: 'Main incomer above contracted peak' },
];

/** How many past writes per point are kept to answer history for setpoints. */
const WRITE_LOG_LIMIT = 100;
const ALARM_LIMIT = 1000;
const HISTORY_MAX_POINTS = 500;
const HISTORY_MIN_STEP_MS = 5 * 60_000;

/** Deterministic noise in [-1, 1] for a code and a 10-second slot: history reads the same twice. */
function noise(code: string, slot: number): number {
  let h = 2166136261 ^ slot;
  for (let i = 0; i < code.length; i++) h = Math.imul(h ^ code.charCodeAt(i), 16777619);
  h = Math.imul(h ^ (h >>> 15), 2246822507);
  h ^= h >>> 13;
  return ((h >>> 0) / 0xffffffff) * 2 - 1;
}

export class WriteRejected extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class Building {
  private readonly points: Map<string, PointDefinition>;
  /** The loads the main incomer sums: its sub-meters and the unmetered rest. */
  private readonly mainLoads: PointDefinition[];
  /** Counters reset by hand (`POST {base}/sim/meters/reset`): the raw reading at the reset, from then on subtracted. */
  private readonly resets = new Map<string, { at: number; raw: number }>();
  /** While true every gateway call answers 503 (`POST {base}/sim/offline`): an outage as the service sees it. */
  offline = false;
  /** Setpoint and command writes, oldest first: [ts, value]. */
  private readonly writes = new Map<string, Array<[number, number]>>();
  private readonly forced = new Map<string, PointValue>();
  private readonly alarms: Alarm[];
  private nextAlarmId: number;
  private readonly climate = new Climate();
  private readonly extraLoads: Array<{ from: number; to: number; kw: number; kwPerMinute: number }> = [];
  private readonly utilities: Utilities;

  /** The HVAC plant with its injectable faults (issue 54); absent unless asked for (EMS_SIM_EQUIPMENT=on). */
  readonly plant: Plant | undefined;

  constructor(
    private readonly now: () => number = Date.now,
    subMeters = DEFAULT_SUB_METERS,
    equipment?: { faults?: InjectedFault[] },
  ) {
    const tenants = tenantMeters(subMeters);
    this.plant = equipment ? new Plant(this.climate, equipment.faults) : undefined;
    const plantPoints: PointDefinition[] = this.plant
      ? PLANT_POINTS.map((point) => ({ code: point.code, name: point.name, unit: point.unit, kind: point.kind as PointKind, base: 0, plant: true }))
      : [];
    this.points = new Map([...POINTS, ...tenants, ...plantPoints].map((point) => [point.code, point]));
    this.mainLoads = [...NAMED_SUBS.slice(0, Math.max(0, Math.min(subMeters, NAMED_SUBS.length))).map((code) => this.points.get(code)!), ...tenants, UNMETERED];
    const mainShape = { base: 0, occupied: 0, heatingPerK: 0, coolingPerK: 0 };
    for (const load of this.mainLoads) for (const key of Object.keys(mainShape) as (keyof LoadShape)[]) mainShape[key] += load.shape![key];
    this.utilities = new Utilities(this.climate, mainShape);
    // A few alarms the building "had" before the simulator started, newest last. Their times hang on the UTC day, not
    // on the start: a restarted simulator reports the same occurrences, as a real gateway would.
    const t = Math.floor(now() / (24 * HOUR_MS)) * 24 * HOUR_MS;
    const iso = (offsetMs: number) => new Date(t - offsetMs).toISOString();
    this.alarms = [
      {
        id: 1,
        code: 'temp.serverroom',
        level: 'critical',
        message: 'Server room temperature above 27 °C',
        state: 'cleared',
        raisedAt: iso(50 * HOUR_MS),
        clearedAt: iso(49.5 * HOUR_MS),
      },
      {
        id: 2,
        code: 'meter.it.kwh',
        level: 'warning',
        message: 'Meter communication lost',
        state: 'cleared',
        raisedAt: iso(26 * HOUR_MS),
        clearedAt: iso(25.8 * HOUR_MS),
      },
      {
        id: 3,
        code: 'ahu1.run',
        level: 'warning',
        message: 'AHU-1 filter differential pressure high',
        state: 'active',
        raisedAt: iso(2 * HOUR_MS),
        clearedAt: null,
      },
      {
        id: 4,
        code: 'temp.zone2',
        level: 'info',
        message: 'Office floor 2 deviates from its setpoint by more than 2 K',
        state: 'active',
        raisedAt: iso(20 * 60_000),
        clearedAt: null,
      },
    ];
    this.nextAlarmId = this.alarms.length + 1;
  }

  has(code: string): boolean {
    return this.points.has(code);
  }

  /** The point catalogue (`GET {base}/codes`). */
  catalogue(): Array<{ code: string; name: string; unit: string; kind: string }> {
    return [...this.points.values()].map(({ code, name, unit, kind }) => ({ code, name, unit, kind }));
  }

  /** The counter restarts from zero now, as a replaced meter's would; false for a point that is not an energy counter. */
  resetCounter(code: string): boolean {
    const point = this.points.get(code);
    if (!point || point.kind !== 'energy') return false;
    const t = this.now();
    this.resets.delete(code);
    this.resets.set(code, { at: t, raw: this.valueAt(point, t) });
    return true;
  }

  read(code: string): { code: string; value: PointValue | null; quality: Quality; ts: string } {
    const t = this.now();
    const ts = new Date(t).toISOString();
    const point = this.points.get(code);
    if (!point) return { code, value: null, quality: 'bad', ts };
    const forced = this.forced.get(code);
    if (forced !== undefined) return { code, value: forced, quality: 'forced', ts };
    return { code, value: this.valueAt(point, t), quality: 'good', ts };
  }

  /** Samples between start and end (epoch ms), at most HISTORY_MAX_POINTS of them. */
  history(code: string, start: number, end: number): Array<{ ts: string; value: number }> | undefined {
    const point = this.points.get(code);
    if (!point) return undefined;
    const step = Math.max(HISTORY_MIN_STEP_MS, Math.ceil((end - start) / HISTORY_MAX_POINTS / 60_000) * 60_000);
    const first = Math.ceil(start / step) * step;
    const last = Math.min(end, this.now());
    const samples: Array<{ ts: string; value: number }> = [];
    for (let t = first; t <= last; t += step) samples.push({ ts: new Date(t).toISOString(), value: this.valueAt(point, t) });
    return samples;
  }

  /**
   * The values on a grid of `stepMs` (multiples of it since the epoch) from start to end, none past now: codes/history
   * with its optional `step`. undefined for an unknown code.
   */
  historyOnGrid(code: string, start: number, end: number, stepMs: number): { first: number; values: number[] } | undefined {
    const point = this.points.get(code);
    if (!point) return undefined;
    const first = Math.ceil(start / stepMs) * stepMs;
    const last = Math.min(end, this.now());
    const values: number[] = [];
    for (let t = first; t <= last; t += stepMs) values.push(this.valueAt(point, t));
    return { first, values };
  }

  /** A plain write: setpoints and commands only, within their range. */
  set(code: string, value: PointValue): void {
    const point = this.points.get(code);
    if (!point) throw new WriteRejected(404, `unknown point ${code}`);
    if (point.plant) throw new WriteRejected(409, `${code} is run by the simulated plant; use force-set to override it`);
    if (point.kind !== 'setpoint' && point.kind !== 'command') throw new WriteRejected(409, `${code} is read-only; use force-set to override it`);
    const numeric = typeof value === 'boolean' ? Number(value) : value;
    if (typeof numeric !== 'number' || !Number.isFinite(numeric)) throw new WriteRejected(400, `${code} takes a number`);
    if (numeric < point.min! || numeric > point.max!) throw new WriteRejected(400, `${code} accepts ${point.min} to ${point.max} ${point.unit}`.trim());
    if (point.kind === 'command' && !Number.isInteger(numeric)) throw new WriteRejected(400, `${code} takes 0 or 1`);
    let log = this.writes.get(code);
    if (!log) this.writes.set(code, (log = []));
    log.push([this.now(), numeric]);
    if (log.length > WRITE_LOG_LIMIT) log.shift();
  }

  /** An override of any point, held until the next force-set; `null` releases it. */
  forceSet(code: string, value: PointValue | null): void {
    if (!this.points.has(code)) throw new WriteRejected(404, `unknown point ${code}`);
    if (value === null) {
      this.forced.delete(code);
      return;
    }
    this.forced.set(code, value);
    this.raise(code, 'info', `${code} forced to ${String(value)} by an operator`);
  }

  alarmList(): readonly Alarm[] {
    return this.alarms;
  }

  alarmConfigs(): readonly AlarmConfig[] {
    return ALARM_CONFIGS;
  }

  /** An alarm condition starts now (tests and `POST {base}/sim/alarms` raise them by hand). */
  raiseAlarm(code: string, level: Alarm['level'], message: string): Alarm {
    const alarm: Alarm = { id: this.nextAlarmId++, code, level, message, state: 'active', raisedAt: new Date(this.now()).toISOString(), clearedAt: null };
    this.alarms.push(alarm);
    if (this.alarms.length > ALARM_LIMIT) this.alarms.shift();
    return alarm;
  }

  /** The condition is back to normal; false for an unknown or already cleared alarm. */
  clearAlarm(id: number): boolean {
    const alarm = this.alarms.find((candidate) => candidate.id === id);
    if (!alarm || alarm.state === 'cleared') return false;
    alarm.state = 'cleared';
    alarm.clearedAt = new Date(this.now()).toISOString();
    return true;
  }

  private raise(code: string, level: Alarm['level'], message: string): void {
    this.raiseAlarm(code, level, message);
  }

  private written(code: string, t: number, fallback: number): number {
    const log = this.writes.get(code);
    if (!log) return fallback;
    let value = fallback;
    for (const [at, written] of log) {
      if (at > t) break;
      value = written;
    }
    return value;
  }

  private valueAt(point: PointDefinition, t: number): number {
    const reset = this.resets.get(point.code);
    if (reset && t >= reset.at) return round(this.rawValueAt(point, t) - reset.raw, 2);
    return this.rawValueAt(point, t);
  }

  /** A meter's energy (kWh since the counter epoch) without rounding: the climate model's exact integral of its load. */
  private counter(point: PointDefinition, t: number): number {
    return point.shape ? this.climate.energy(point.shape, t) : 0;
  }

  private load(point: PointDefinition, t: number): number {
    return point.shape ? this.climate.load(point.shape, t) : 0;
  }

  /** The outdoor temperature, the occupancy and the day type the loads follow at t (for tests, demos and docs). */
  conditions(t: number): { outdoorC: number; occupancy: number; dayType: 'working' | 'weekend' | 'holiday' } {
    return { outdoorC: this.climate.outdoorC(t), occupancy: this.climate.occupancy(t), dayType: this.climate.dayType(t) };
  }

  /** A meter's counter at any instant without moving the clock (tests compare stored figures with it). */
  counterAt(code: string, t: number): number | undefined {
    const point = this.points.get(code);
    if (!point || point.kind !== 'energy') return undefined;
    return this.rawValueAt(point, t);
  }

  /**
   * An extra load on the main incomer from now (`POST {base}/sim/load`): `kw` at once, rising by `kwPerMinute`, for
   * `minutes`: a chiller starting, a car park of chargers; what demand warnings are tested against.
   */
  addLoad(kw: number, kwPerMinute: number, minutes: number): { from: string; to: string } {
    const from = this.now();
    const to = from + minutes * 60_000;
    this.extraLoads.push({ from, to, kw, kwPerMinute });
    if (this.extraLoads.length > 100) this.extraLoads.shift();
    return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
  }

  private extraKw(t: number): number {
    let kw = 0;
    for (const load of this.extraLoads) if (t >= load.from && t < load.to) kw += load.kw + (load.kwPerMinute * (t - load.from)) / 60_000;
    return kw;
  }

  /** kWh the extra loads added up to t (the integral of a line over each load's time). */
  private extraKwh(t: number): number {
    let kwh = 0;
    for (const load of this.extraLoads) {
      if (t <= load.from) continue;
      const minutes = (Math.min(t, load.to) - load.from) / 60_000;
      kwh += (load.kw * minutes + (load.kwPerMinute * minutes * minutes) / 2) / 60;
    }
    return kwh;
  }

  /** The building's electricity consumption (kWh since the counter epoch): what the main incomer metered before PV. */
  consumptionAt(t: number): number {
    const plantKwh = this.plant ? this.plant.counters(t).reduce((sum, kwh) => sum + kwh, 0) : 0;
    return this.mainLoads.reduce((sum, load) => sum + this.counter(load, t), 0) + this.extraKwh(t) + plantKwh;
  }

  private rawValueAt(point: PointDefinition, t: number): number {
    if (point.plant) return this.plant!.value(point.code, t);
    const phase = OMEGA * (t - (point.peakHour ?? 12) * HOUR_MS);
    const slot = Math.floor(t / 10_000);
    if (point.utility && point.kind === 'energy') return round(this.utilities.counter(point.utility, t), 3);
    if (point.utility) return round(this.utilities.rate(point.utility, t), 1);
    // The grid import: consumption less what the panels make, plus what they make beyond it (exported, not drawn).
    if (point.main && point.kind === 'energy') return round(this.consumptionAt(t) - this.utilities.counter('pv', t) + this.utilities.counter('export', t), 2);
    if (point.main && point.kind === 'power') {
      const total =
        this.mainLoads.reduce((sum, load) => sum + this.load(load, t), 0) +
        this.extraKw(t) +
        (this.plant?.kw(t) ?? 0) -
        this.utilities.rate('pv', t) +
        this.utilities.rate('export', t);
      return round(total + total * 0.02 * noise(point.code, slot), 1);
    }
    if (point.outdoor) return round(this.climate.outdoorC(t) + 0.15 * noise(point.code, slot), 1);
    switch (point.kind) {
      case 'energy': {
        // Energy is the integral of the load, so the counter only ever rises.
        return round(this.counter(point, t), 2);
      }
      case 'power': {
        const kw = this.load(point, t);
        return round(kw + kw * 0.02 * noise(point.code, slot), 1);
      }
      case 'temperature':
      case 'humidity': {
        const mean = point.follows ? this.written(point.follows, t, this.points.get(point.follows)!.base) : point.base;
        return round(mean + (point.swing ?? 0) * Math.cos(phase) + 0.15 * noise(point.code, slot), 1);
      }
      case 'setpoint':
      case 'command':
        return this.written(point.code, t, point.base);
      case 'position':
      case 'status':
        return point.base;
    }
  }
}
