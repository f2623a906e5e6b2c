// The Brick classes EMS knows, each with the units it may be read in, and a suggestion of equipment and class from a
// gateway code's name and unit (a person confirms it). Names are Brick 1.3's (https://brickschema.org/ontology).
import type { EQUIPMENT_TYPES } from '../platform/db/schema/index.ts';

export type EquipmentType = (typeof EQUIPMENT_TYPES)[number];

/** What a class measures, and so which units it accepts. */
type Quantity = 'temperature' | 'percent' | 'status' | 'power' | 'energy' | 'flow' | 'pressure';

export const UNITS: Record<Quantity, readonly string[]> = {
  temperature: ['°C', 'degC', 'K'],
  percent: ['%'],
  status: ['', 'bool', 'on/off'],
  power: ['kW', 'W'],
  energy: ['kWh', 'Wh', 'MWh'],
  flow: ['m³/s', 'm3/s', 'l/s'],
  pressure: ['Pa', 'kPa'],
};

/** The Brick classes a rule may name, with the quantity each measures. */
export const BRICK_CLASSES: Record<string, Quantity> = {
  Outside_Air_Temperature_Sensor: 'temperature',
  Mixed_Air_Temperature_Sensor: 'temperature',
  Return_Air_Temperature_Sensor: 'temperature',
  Supply_Air_Temperature_Sensor: 'temperature',
  Supply_Air_Temperature_Setpoint: 'temperature',
  Zone_Air_Temperature_Sensor: 'temperature',
  Zone_Air_Temperature_Setpoint: 'temperature',
  Chilled_Water_Supply_Temperature_Sensor: 'temperature',
  Chilled_Water_Return_Temperature_Sensor: 'temperature',
  Hot_Water_Supply_Temperature_Sensor: 'temperature',
  Hot_Water_Return_Temperature_Sensor: 'temperature',
  Outside_Air_Damper_Position_Sensor: 'percent',
  Damper_Position_Sensor: 'percent',
  Heating_Valve: 'percent',
  Cooling_Valve: 'percent',
  Supply_Fan_Status: 'status',
  Pump_Status: 'status',
  Run_Status: 'status',
  Occupancy_Command: 'status',
  Electric_Power_Sensor: 'power',
  Electric_Energy_Sensor: 'energy',
  Supply_Air_Flow_Sensor: 'flow',
  Supply_Air_Static_Pressure_Sensor: 'pressure',
};

/** Whether `unit` can be the unit of a point of `brickClass`; the reason when not. */
export function unitContradiction(brickClass: string, unit: string): string | null {
  const quantity = BRICK_CLASSES[brickClass];
  if (!quantity) return `unknown Brick class ${brickClass} (known: ${Object.keys(BRICK_CLASSES).join(', ')})`;
  if (!UNITS[quantity].includes(unit))
    return `${brickClass} measures ${quantity}: unit must be one of ${UNITS[quantity].map((u) => `"${u}"`).join(', ')}, not "${unit}"`;
  return null;
}

/** Words in a code or name that point at a class; the first match wins, so the specific words come first. */
const CLASS_HINTS: Array<[RegExp, string]> = [
  [/\b(sat|supply.?air).?(sp|setpoint)\b/i, 'Supply_Air_Temperature_Setpoint'],
  [/\b(zat|zone).?(sp|setpoint)\b|\bsp\.zone|zone.*setpoint/i, 'Zone_Air_Temperature_Setpoint'],
  [/\boat\b|outdoor|outside.?air.?temp/i, 'Outside_Air_Temperature_Sensor'],
  [/\bmat\b|mixed.?air/i, 'Mixed_Air_Temperature_Sensor'],
  [/\brat\b|return.?air/i, 'Return_Air_Temperature_Sensor'],
  [/\bsat\b|supply.?air.?temp/i, 'Supply_Air_Temperature_Sensor'],
  [/\bzat\b|zone.*temp|temp\.zone/i, 'Zone_Air_Temperature_Sensor'],
  [/\bchwst\b|chilled.?water.?supply/i, 'Chilled_Water_Supply_Temperature_Sensor'],
  [/\bchwrt\b|chilled.?water.?return/i, 'Chilled_Water_Return_Temperature_Sensor'],
  [/\bhwst\b|hot.?water.?supply/i, 'Hot_Water_Supply_Temperature_Sensor'],
  [/\bhwrt\b|hot.?water.?return/i, 'Hot_Water_Return_Temperature_Sensor'],
  [/\boad\b|outside.?air.?damper/i, 'Outside_Air_Damper_Position_Sensor'],
  [/\bdmp\b|damper/i, 'Damper_Position_Sensor'],
  [/\bhcv\b|heating.?valve/i, 'Heating_Valve'],
  [/\bccv\b|cooling.?valve/i, 'Cooling_Valve'],
  [/\bsf\b|supply.?fan/i, 'Supply_Fan_Status'],
  [/\bpump\b/i, 'Pump_Status'],
  [/\bocc\b|occupancy|schedule/i, 'Occupancy_Command'],
  [/\b(status|run)\b/i, 'Run_Status'],
];

/** Words that name an equipment in a code: the prefix before the first dot ("ahu1.sat" → AHU-1). */
const EQUIPMENT_HINTS: Array<[RegExp, EquipmentType, (n: string) => string]> = [
  [/^ahu[-_ ]?(\d+)/i, 'AHU', (n) => `AHU-${n}`],
  [/^vav[-_ ]?([\d.]+?)(?=\.|$)/i, 'VAV', (n) => `VAV-${n}`],
  [/^(?:chiller|ch)[-_ ]?(\d+)/i, 'Chiller', (n) => `Chiller-${n}`],
  [/^(?:hw|hwloop|boiler)\b/i, 'HotWaterLoop', () => 'HW-Loop'],
  [/^(?:temp|sp)\.zone(\d+)/i, 'Zone', (n) => `Zone-${n}`],
];

export type Suggestion = { code: string; equipment: string | null; equipmentType: EquipmentType | null; brickClass: string | null; unit: string };

/** A guess from the code, its name and unit; null parts where nothing fits (a person fills them in). */
export function suggest(point: { code: string; name: string | null; unit: string | null }): Suggestion {
  const words = `${point.code.replace(/[._]/g, ' ')} ${point.name ?? ''}`;
  const unit = point.unit ?? '';
  let brickClass: string | null = null;
  for (const [pattern, candidate] of CLASS_HINTS)
    if (pattern.test(words) && UNITS[BRICK_CLASSES[candidate]!].includes(unit)) {
      brickClass = candidate;
      break;
    }
  if (!brickClass && UNITS.power.includes(unit)) brickClass = 'Electric_Power_Sensor';
  if (!brickClass && UNITS.energy.includes(unit)) brickClass = 'Electric_Energy_Sensor';
  let equipment: string | null = null;
  let equipmentType: EquipmentType | null = null;
  for (const [pattern, type, name] of EQUIPMENT_HINTS) {
    const match = pattern.exec(point.code);
    if (match) {
      equipment = name(match[1] ?? '');
      equipmentType = type;
      break;
    }
  }
  if (!equipment && point.code.startsWith('meter.')) {
    equipment = point.code.split('.').slice(0, 2).join('.');
    equipmentType = 'Meter';
  }
  return { code: point.code, equipment, equipmentType, brickClass, unit };
}
