// The shipped rule library: each rule is data (checked by checkRule like any rule a person writes), with its published
// source. docs/fault-detection.md lists each one's condition, source and waste method. Thresholds follow G36's
// defaults where it gives one (temperature error 1.5–2 K, OA fraction error 0.15).
import type { EquipmentType } from './brick.ts';
import type { RuleDefinitionView } from './schemas.ts';

const p = (name: string) => ({ p: name });
const param = (name: string) => ({ param: name });
const op = (name: string, ...args: unknown[]) => ({ op: name, args });

/** Rated figures by equipment type, used when the equipment's own record does not give one (PUT /api/fdd/equipment/:name). */
export const DEFAULT_PARAMS: Partial<Record<EquipmentType, Record<string, number>>> = {
  // 5 m³/s of air: 6.03 kW per K (1.2 kg/m³ × 1.005 kJ/kg·K); fan heat ≈ fan kW / that.
  AHU: { airKwPerK: 6.03, fanHeatK: 1.2, oaMin: 0.2, heatingEff: 0.98, coolingCop: 3.5, fanKw: 7.5, heatingCapacityKw: 150, coolingCapacityKw: 200 },
  Chiller: { designDeltaT: 5, pumpKw: 4, startLossShare: 0.1 },
  VAV: { comfortBandK: 2 },
};

/** SAT − MAT − fan heat: what a coil added to the air (negative: removed). */
const coilRise = op('sub', op('sub', p('sat'), p('mat')), param('fanHeatK'));
/** kW the cooling coil removes, from its valve and rated capacity (a linear valve). */
const coolingKw = op('mul', op('div', p('ccv'), 100), param('coolingCapacityKw'));
/**
 * The supply air sensor against the heat balance across the coils: (SAT − MAT − fan heat) less what the valves say the
 * coils did (heating valve × heating capacity − cooling valve × cooling capacity, ÷ air kW/K), in K. Zero for a true
 * sensor and tight valves; a sensor reading low makes it negative.
 */
const sensorOffset = op('sub', coilRise, op('div', op('sub', op('mul', op('div', p('hcv'), 100), param('heatingCapacityKw')), coolingKw), param('airKwPerK')));

const AHU_PARAMS = ['airKwPerK', 'fanHeatK', 'heatingEff', 'coolingCop'];

export const RULE_LIBRARY: RuleDefinitionView[] = [
  {
    id: 'ahu-heating-coil-leak',
    // Version 2 (issue 54, round 3): the heat balance across both coils, so a leak the cooling coil removes is seen and priced.
    version: 2,
    title: 'Heat added by the inactive heating coil',
    description:
      'The heating valve is shut but the heat balance across the coils shows heat added: the air leaves warmer than the mixed air plus fan heat, or the cooling coil removes heat nothing else added. A leaking (passing) valve.',
    source: { scheme: 'G36', ref: 'FC#15' },
    equipmentType: 'AHU',
    inputs: { sat: 'Supply_Air_Temperature_Sensor', mat: 'Mixed_Air_Temperature_Sensor', hcv: 'Heating_Valve', ccv: 'Cooling_Valve' },
    params: [...AHU_PARAMS, 'coolingCapacityKw'],
    // The leak's heat: what the air gained across the coils plus what the cooling coil took out again.
    let: { rise: coilRise, cool: coolingKw, leakKw: op('add', op('mul', param('airKwPerK'), p('rise')), p('cool')) },
    mode: 'fan_on',
    condition: op('and', op('le', p('hcv'), 1), op('gt', p('leakKw'), op('mul', param('airKwPerK'), 1.5))),
    persistenceMinutes: 30,
    severity: 'high',
    waste: {
      method:
        'the leak from the heat balance across the coils (air kW/K × rise + cooling valve × cooling coil capacity) ÷ heating efficiency, plus the cooling that removes it (the smaller of the leak and the cooling) ÷ chiller COP',
      kw: op('add', op('div', p('leakKw'), param('heatingEff')), op('div', op('min', p('leakKw'), p('cool')), param('coolingCop'))),
    },
  },
  {
    id: 'ahu-simultaneous-heating-cooling',
    version: 1,
    title: 'Heating and cooling valves open at once',
    description: 'Both coil valves are open: the cooling coil removes heat the heating coil adds.',
    source: { scheme: 'APAR', ref: 'mode 5 (simultaneous heating and cooling)' },
    equipmentType: 'AHU',
    inputs: { hcv: 'Heating_Valve', ccv: 'Cooling_Valve' },
    params: ['heatingCapacityKw', 'heatingEff', 'coolingCop'],
    mode: 'fan_on',
    condition: op('and', op('gt', p('hcv'), 5), op('gt', p('ccv'), 5)),
    persistenceMinutes: 30,
    severity: 'high',
    waste: {
      method: 'the overlap (the smaller valve opening × heating coil capacity) ÷ heating efficiency, plus ÷ chiller COP to remove it',
      kw: op(
        'mul',
        op('div', op('min', p('hcv'), p('ccv')), 100),
        param('heatingCapacityKw'),
        op('add', op('div', 1, param('heatingEff')), op('div', 1, param('coolingCop'))),
      ),
    },
  },
  {
    id: 'ahu-sat-mat-economiser',
    // Version 2 (issue 54, round 3): the gap is taken against the heat balance across the coils, so the offset is seen
    // (and its cost counted) while the coils run too, not only in free cooling.
    version: 2,
    title: 'Supply air sensor off the heat balance',
    description:
      'The supply air should be the mixed air plus fan heat plus what the valves say the coils did; a steady gap is a drifting or biased sensor (in free cooling, as G36 FC#8; a sensor reading low also while the coils run).',
    source: { scheme: 'G36', ref: 'FC#8' },
    equipmentType: 'AHU',
    inputs: { sat: 'Supply_Air_Temperature_Sensor', mat: 'Mixed_Air_Temperature_Sensor', hcv: 'Heating_Valve', ccv: 'Cooling_Valve' },
    params: [...AHU_PARAMS, 'heatingCapacityKw', 'coolingCapacityKw'],
    let: { offset: sensorOffset },
    mode: 'fan_on',
    // A positive gap with a coil running is a leak as much as a sensor (the leak rule's); a negative one is the sensor.
    condition: op('or', op('lt', p('offset'), -1.5), op('and', op('le', p('hcv'), 1), op('le', p('ccv'), 1), op('gt', p('offset'), 1.5))),
    persistenceMinutes: 60,
    severity: 'medium',
    waste: {
      method:
        'the coil energy the supply air loop spends chasing the offset: while heating, the heating coil’s kW (valve × capacity) up to air kW/K × the offset a low reading adds, ÷ heating efficiency; while cooling, the cooling coil’s kW up to air kW/K × the offset a high reading adds, ÷ chiller COP; nothing in free cooling (the damper chases it at no energy)',
      kw: op(
        'if',
        op('gt', p('hcv'), 1),
        op(
          'div',
          op('min', op('mul', op('div', p('hcv'), 100), param('heatingCapacityKw')), op('mul', param('airKwPerK'), op('max', 0, op('sub', 0, p('offset'))))),
          param('heatingEff'),
        ),
        op('if', op('gt', p('ccv'), 1), op('div', op('min', coolingKw, op('mul', param('airKwPerK'), op('max', 0, p('offset')))), param('coolingCop')), 0),
      ),
    },
  },
  {
    id: 'ahu-oa-fraction-off-minimum',
    version: 1,
    title: 'Outside-air fraction off its minimum while heating',
    description:
      'In heating the damper should sit at its minimum; the fraction from the temperatures ((MAT−RAT)/(OAT−RAT)) is far from it: a stuck or leaking damper.',
    source: { scheme: 'G36', ref: 'FC#6' },
    equipmentType: 'AHU',
    inputs: { oat: 'Outside_Air_Temperature_Sensor', mat: 'Mixed_Air_Temperature_Sensor', rat: 'Return_Air_Temperature_Sensor' },
    params: ['airKwPerK', 'oaMin', 'heatingEff'],
    let: { oaf: op('div', op('sub', p('mat'), p('rat')), op('sub', p('oat'), p('rat'))) },
    mode: 'heating',
    condition: op('and', op('gt', op('sub', p('rat'), p('oat')), 5), op('gt', op('abs', op('sub', p('oaf'), param('oaMin'))), 0.15)),
    persistenceMinutes: 30,
    severity: 'medium',
    waste: {
      method: 'the extra outside air heated: air kW/K × (fraction − minimum) × (RAT − OAT) ÷ heating efficiency',
      kw: op('div', op('mul', param('airKwPerK'), op('max', 0, op('sub', p('oaf'), param('oaMin'))), op('sub', p('rat'), p('oat'))), param('heatingEff')),
    },
  },
  {
    id: 'ahu-sat-off-setpoint',
    version: 1,
    title: 'Supply air temperature off its setpoint',
    description: 'The supply air stays more than 2 K from its setpoint while the fan runs.',
    source: { scheme: 'APAR', ref: 'modes 1 and 4 (SAT setpoint not met)' },
    equipmentType: 'AHU',
    inputs: { sat: 'Supply_Air_Temperature_Sensor', satsp: 'Supply_Air_Temperature_Setpoint', ccv: 'Cooling_Valve' },
    params: ['airKwPerK', 'heatingEff', 'coolingCop'],
    mode: 'fan_on',
    condition: op('gt', op('abs', op('sub', p('sat'), p('satsp'))), 2),
    persistenceMinutes: 60,
    severity: 'medium',
    waste: {
      method: 'air kW/K × |SAT − setpoint| ÷ chiller COP when cooling, ÷ heating efficiency otherwise (the error the zones then undo)',
      kw: op(
        'mul',
        param('airKwPerK'),
        op('abs', op('sub', p('sat'), p('satsp'))),
        op('if', op('gt', p('ccv'), 1), op('div', 1, param('coolingCop')), op('div', 1, param('heatingEff'))),
      ),
    },
  },
  {
    id: 'ahu-economiser-should-be-on',
    version: 1,
    title: 'Economiser should be on and is not',
    description: 'Mechanical cooling runs with the damper near its minimum while the outside air is at least 3 K cooler than the return air.',
    source: { scheme: 'APAR', ref: 'mode 4 (OAT below the economiser changeover)' },
    equipmentType: 'AHU',
    inputs: { oat: 'Outside_Air_Temperature_Sensor', rat: 'Return_Air_Temperature_Sensor', oad: 'Outside_Air_Damper_Position_Sensor', ccv: 'Cooling_Valve' },
    params: ['airKwPerK', 'oaMin', 'coolingCop'],
    mode: 'cooling',
    condition: op('and', op('lt', p('oat'), op('sub', p('rat'), 3)), op('lt', p('oad'), op('add', op('mul', param('oaMin'), 100), 10))),
    persistenceMinutes: 60,
    severity: 'medium',
    waste: {
      method: 'the free cooling missed: air kW/K × (1 − damper) × (RAT − OAT) ÷ chiller COP',
      kw: op('div', op('mul', param('airKwPerK'), op('sub', 1, op('div', p('oad'), 100)), op('sub', p('rat'), p('oat'))), param('coolingCop')),
    },
  },
  {
    id: 'ahu-economiser-should-be-off',
    version: 1,
    title: 'Economiser open while the outside air is warmer than the return',
    description: 'The damper is well above its minimum while cooling with outside air warmer than the return air.',
    source: { scheme: 'G36', ref: 'FC#9 / APAR mode 3' },
    equipmentType: 'AHU',
    inputs: { oat: 'Outside_Air_Temperature_Sensor', rat: 'Return_Air_Temperature_Sensor', oad: 'Outside_Air_Damper_Position_Sensor', ccv: 'Cooling_Valve' },
    params: ['airKwPerK', 'oaMin', 'coolingCop'],
    mode: 'cooling',
    condition: op('and', op('gt', p('oat'), op('add', p('rat'), 1)), op('gt', p('oad'), op('add', op('mul', param('oaMin'), 100), 20))),
    persistenceMinutes: 60,
    severity: 'medium',
    waste: {
      method: 'the warm outside air cooled: air kW/K × (damper − minimum) × (OAT − RAT) ÷ chiller COP',
      kw: op('div', op('mul', param('airKwPerK'), op('sub', op('div', p('oad'), 100), param('oaMin')), op('sub', p('oat'), p('rat'))), param('coolingCop')),
    },
  },
  {
    id: 'ahu-fan-out-of-schedule',
    version: 1,
    title: 'Fan running out of the occupancy schedule',
    description: 'The supply fan runs while the schedule says unoccupied (a hand override, a forgotten holiday).',
    source: { scheme: 'EMS', ref: 'out-of-schedule runtime' },
    equipmentType: 'AHU',
    inputs: {
      sf: 'Supply_Fan_Status',
      fankw: 'Electric_Power_Sensor',
      sat: 'Supply_Air_Temperature_Sensor',
      mat: 'Mixed_Air_Temperature_Sensor',
      ccv: 'Cooling_Valve',
    },
    params: AHU_PARAMS,
    let: { rise: coilRise },
    mode: 'unoccupied',
    condition: op('ge', p('sf'), 0.5),
    persistenceMinutes: 30,
    severity: 'medium',
    waste: {
      method: 'out-of-schedule runtime × the measured fan power, plus the coils: air kW/K × heat added ÷ heating efficiency, heat removed ÷ chiller COP',
      kw: op(
        'add',
        p('fankw'),
        op('div', op('mul', param('airKwPerK'), op('max', 0, p('rise'))), param('heatingEff')),
        op('div', op('mul', param('airKwPerK'), op('max', 0, op('sub', 0, p('rise')))), param('coolingCop')),
      ),
    },
  },
  {
    id: 'ahu-mat-out-of-range',
    version: 1,
    title: 'Mixed air outside the outside and return temperatures',
    description: 'Mixed air must lie between outside and return air; outside that span a sensor is wrong.',
    source: { scheme: 'G36', ref: 'FC#2 and FC#3' },
    equipmentType: 'AHU',
    inputs: { oat: 'Outside_Air_Temperature_Sensor', mat: 'Mixed_Air_Temperature_Sensor', rat: 'Return_Air_Temperature_Sensor' },
    mode: 'fan_on',
    condition: op('or', op('lt', p('mat'), op('sub', op('min', p('oat'), p('rat')), 1.5)), op('gt', p('mat'), op('add', op('max', p('oat'), p('rat')), 1.5))),
    persistenceMinutes: 30,
    severity: 'low',
    waste: { method: 'not estimated: a sensor fault', kw: 0 },
  },
  {
    id: 'sensor-flat-lined',
    version: 1,
    title: 'Supply air temperature sensor flat-lined',
    description: 'The supply air temperature has not moved by 0.05 K in two hours while the fan runs: a frozen sensor or a stale gateway value.',
    source: { scheme: 'EMS', ref: 'sensor health (flat line)' },
    equipmentType: 'AHU',
    inputs: { sat: 'Supply_Air_Temperature_Sensor' },
    mode: 'fan_on',
    condition: op('lt', { fn: 'span', p: 'sat', minutes: 120 }, 0.05),
    persistenceMinutes: 0,
    severity: 'low',
    waste: { method: 'not estimated: a sensor fault', kw: 0 },
  },
  {
    id: 'sensor-out-of-range',
    version: 1,
    title: 'Outside air temperature out of its physical range',
    description: 'An outdoor reading below −40 °C or above 55 °C is a broken sensor or a wrong unit.',
    source: { scheme: 'EMS', ref: 'sensor health (physical range)' },
    equipmentType: 'AHU',
    inputs: { oat: 'Outside_Air_Temperature_Sensor' },
    mode: 'any',
    condition: op('or', op('lt', p('oat'), -40), op('gt', p('oat'), 55)),
    persistenceMinutes: 15,
    severity: 'low',
    waste: { method: 'not estimated: a sensor fault', kw: 0 },
  },
  {
    id: 'ahu-fan-stuck-after-command',
    version: 1,
    title: 'Fan does not follow its command',
    description: 'The schedule commands the fan on but its status stays off: the value is stuck after the command (as load shedding’s read-back checks).',
    source: { scheme: 'EMS', ref: 'command read-back' },
    equipmentType: 'AHU',
    inputs: { sf: 'Supply_Fan_Status' },
    mode: 'occupied',
    condition: op('lt', p('sf'), 0.5),
    persistenceMinutes: 15,
    severity: 'high',
    waste: { method: 'not estimated: comfort, not energy', kw: 0 },
  },
  {
    id: 'zone-out-of-comfort',
    version: 1,
    title: 'Zone out of its comfort band for long',
    description: 'While occupied the zone stays more than its band (default 2 K) from its setpoint for two hours.',
    source: { scheme: 'VPACC', ref: 'zone temperature not maintained' },
    equipmentType: 'VAV',
    inputs: { zat: 'Zone_Air_Temperature_Sensor', zatsp: 'Zone_Air_Temperature_Setpoint' },
    params: ['comfortBandK'],
    mode: 'occupied',
    condition: op('gt', op('abs', op('sub', p('zat'), p('zatsp'))), param('comfortBandK')),
    persistenceMinutes: 120,
    severity: 'low',
    waste: { method: 'not estimated: comfort, not energy', kw: 0 },
  },
  {
    id: 'chiller-low-delta-t',
    version: 1,
    title: 'Chiller low delta-T',
    description: 'The chilled water returns less than half its design delta-T warmer than it leaves: too much water pumped for the load.',
    source: { scheme: 'EMS', ref: 'low delta-T syndrome' },
    equipmentType: 'Chiller',
    inputs: { status: 'Run_Status', chwst: 'Chilled_Water_Supply_Temperature_Sensor', chwrt: 'Chilled_Water_Return_Temperature_Sensor' },
    params: ['designDeltaT', 'pumpKw'],
    let: { dt: op('sub', p('chwrt'), p('chwst')) },
    mode: 'any',
    condition: op('and', op('ge', p('status'), 0.5), op('lt', p('dt'), op('div', param('designDeltaT'), 2))),
    persistenceMinutes: 60,
    severity: 'low',
    waste: {
      method: 'extra pumping: rated pump kW × (design ΔT ÷ measured ΔT − 1), at most 3 × the pump',
      kw: op('min', op('mul', 3, param('pumpKw')), op('mul', param('pumpKw'), op('sub', op('div', param('designDeltaT'), op('max', 0.5, p('dt'))), 1))),
    },
  },
  {
    id: 'chiller-short-cycling',
    version: 1,
    title: 'Chiller short cycling',
    description: 'More than 6 starts and stops within an hour.',
    source: { scheme: 'EMS', ref: 'short cycling' },
    equipmentType: 'Chiller',
    inputs: { status: 'Run_Status', kw: 'Electric_Power_Sensor' },
    params: ['startLossShare'],
    mode: 'any',
    condition: op('gt', { fn: 'transitions', p: 'status', minutes: 60 }, 6),
    persistenceMinutes: 15,
    severity: 'medium',
    waste: { method: 'start-up losses: the measured power × an assumed share (default 10 %)', kw: op('mul', p('kw'), param('startLossShare')) },
  },
  {
    id: 'meter-night-base-load',
    version: 1,
    title: 'Night base load far above its baseline',
    description: 'Between 20:00 and 06:00 (site time) the power stays more than 50 % above the meter’s night baseline (param baseKw).',
    source: { scheme: 'EMS', ref: 'night and weekend base load' },
    equipmentType: 'Meter',
    inputs: { kw: 'Electric_Power_Sensor' },
    params: ['baseKw'],
    mode: 'night',
    condition: op('gt', p('kw'), op('mul', param('baseKw'), 1.5)),
    persistenceMinutes: 60,
    severity: 'medium',
    waste: { method: 'the power above the baseline: kW − baseKw', kw: op('max', 0, op('sub', p('kw'), param('baseKw'))) },
  },
];
