// Shapes of the gas calorific value versions and the figures by commodity (issue 26).
import { Type } from '@sinclair/typebox';
import { displayTextPattern, Timestamp } from '../platform/http/schemas.ts';

const Day = (description: string) => Type.String({ format: 'date', description });

const calorificFields = {
  validFrom: Day('first site day the version applies to; today or earlier (from a bill) restates the gas days it decides'),
  kwhPerM3: Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'calorific value in kWh per m³, as on the gas bill (natural gas: about 10–12)' }),
  correctionFactor: Type.Number({
    exclusiveMinimum: 0,
    maximum: 10,
    description: 'volume correction to standard temperature and pressure (1 when the bill has none)',
  }),
  note: Type.String({ maxLength: 500, pattern: displayTextPattern(), description: "free text; '' when none was given" }),
};
// A version created without a note has '' (the create body's note, when sent, is trimmed and non-empty).
export const CalorificVersion = Type.Object({
  id: Type.Integer(),
  ...calorificFields,
  note: Type.String({ maxLength: 500, pattern: displayTextPattern() }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const CalorificCreate = Type.Object(
  { ...calorificFields, correctionFactor: Type.Optional(calorificFields.correctionFactor), note: Type.Optional(calorificFields.note) },
  { additionalProperties: false },
);
export const CalorificUpdate = Type.Partial(Type.Object(calorificFields), { additionalProperties: false });

const Coverage = () => Type.Object({ meters: Type.Integer(), recordedDays: Type.Integer() });
const Num = (description: string) => Type.Number({ description });
const Nullable = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
export const CommodityFigures = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  timezone: Type.String(),
  currency: Type.String(),
  commodities: Type.Array(
    Type.Object({
      commodity: Type.String({ description: 'electricity, gas, water or heat; a commodity without meters is absent' }),
      unit: Type.String({ description: 'the unit of quantity: kWh for electricity and heat, m³ for gas and water' }),
      quantity: Nullable('electricity: consumption; gas and water: volume; heat: kWh thermal; null: no data (no recorded day)'),
      kwh: Nullable('energy: electricity consumption, gas volume × calorific value × correction of each day, heat; null for water, and with no data'),
      cost: Nullable(
        "at the commodity's tariff versions (electricity: import cost with standing charges less feed-in revenue); null with no data, and when a day with data has no version",
      ),
      carbonKg: Nullable("at the commodity's tariff versions' CO2 factors; null with no data, and when a day with data has no version"),
      recordedDays: Type.Integer({
        description: 'days of the period with data from at least one of its meters: 0 means no data (its zeros are not measurements)',
      }),
      meters: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), quantity: Num('in the commodity unit') })),
    }),
  ),
  electricity: Type.Object({
    importKwh: Nullable("drawn from the grid: the site meters' sum, the figure every other energy total shows; null: no data"),
    exportKwh: Nullable('fed back to the grid; null: not metered, or no data'),
    generationKwh: Nullable('made on site (PV); null: not metered, or no data'),
    consumptionKwh: Nullable('import − export + generation (a part without meters counts 0); null when a part has no data'),
    selfConsumptionKwh: Nullable('generation − export: what the site used of what it made; null unless both have data'),
    selfConsumptionRate: Nullable('self-consumption / generation; null without generation'),
    selfSufficiency: Nullable('self-consumption / consumption; null without consumption'),
    netImportKwh: Nullable('import − export; null when either has no data'),
    importCost: Nullable('the site cost: interval prices plus standing charges; null: no data'),
    feedInRevenue: Nullable("export × the electricity version's feedInPrice of each day; null: not metered, or no data"),
    coverage: Type.Object(
      { import: Coverage(), export: Coverage(), generation: Coverage() },
      { description: 'per part of the balance: its meters, and the days of the period any of them recorded (no meter: not metered; no day: no data)' },
    ),
  }),
  gasDays: Type.Array(
    Type.Object({
      day: Type.String({ format: 'date' }),
      m3: Type.Number(),
      kwhPerM3: Num('calorific value × correction factor in force that day'),
      kwh: Type.Number(),
    }),
  ),
  energyKwh: Num('electricity consumption + gas kWh + heat kWh: never water, never m³'),
});
