// Shapes of the dated tariff versions (/api/energy/tariffs), served by pricing's route table.
import { Type } from '@sinclair/typebox';
import { COMMODITIES, DEMAND_CHARGE_BASES, WEEKDAYS } from '../platform/db/schema/index.ts';
import { stringEnum, Timestamp } from '../platform/http/schemas.ts';

const Day = (description: string) => Type.String({ format: 'date', description });
const Clock = Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$|^24:00$', description: 'HH:MM, local time; 24:00 ends a band at midnight' });
export const TariffBand = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 40 }),
    days: Type.Array(stringEnum(WEEKDAYS), { minItems: 1, uniqueItems: true, maxItems: WEEKDAYS.length }),
    from: Clock,
    to: Clock,
    price: Type.Number({ minimum: 0, maximum: 1e6 }),
  },
  { additionalProperties: false },
);
const tariffFields = {
  validFrom: Day('first site day the version applies to; today or earlier (from a bill) restates the stored cost of the days it decides'),
  price: Type.Number({ minimum: 0, maximum: 1e6, description: 'per kWh outside every band' }),
  bands: Type.Array(TariffBand, { maxItems: 50, description: 'time-of-use bands; the first that covers an interval prices it' }),
  holidays: Type.Array(Day('a holiday: priced by the bands that list "holiday"'), { maxItems: 400 }),
  standingChargePerDay: Type.Number({ minimum: 0, maximum: 1e7 }),
  carbonFactor: Type.Number({ minimum: 0, maximum: 100, description: 'kg CO2 per kWh' }),
  contractedPeakKw: Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1e7 }), Type.Null()], {
    description: 'the demand the supply contract allows: a site 15-minute mean above it raises an alert (null: none)',
  }),
  demandChargePerKw: Type.Number({ minimum: 0, maximum: 1e6, description: 'per kW of the billed demand each month (capacity tariff); 0: none' }),
  demandChargeBasis: stringEnum(DEMAND_CHARGE_BASES, {
    description:
      "monthly_peak: the month's highest site 15-minute mean; rolling_12_month_average: the mean of the monthly peaks of the 12 months ending with it (Flemish capacity tariff)",
  }),
  demandChargeMinimumKw: Type.Number({ minimum: 0, maximum: 1e7, description: 'the billed demand is at least this (Flanders: 2.5 kW)' }),
  note: Type.String({ maxLength: 500 }),
  feedInPrice: Type.Number({ minimum: 0, maximum: 1e6, description: 'electricity: paid per kWh exported to the grid; 0 for other commodities' }),
};
const TariffCommodity = stringEnum(COMMODITIES, {
  description:
    'what it prices: electricity and heat per kWh, gas per kWh (after the calorific conversion), water per m³; carbonFactor is kg CO2 per the same unit. Versions are dated per commodity.',
});
export const TariffVersion = Type.Object({ id: Type.Integer(), ...tariffFields, commodity: TariffCommodity, createdAt: Timestamp, updatedAt: Timestamp });
export const TariffCreate = Type.Object(
  {
    ...tariffFields,
    bands: Type.Optional(tariffFields.bands),
    holidays: Type.Optional(tariffFields.holidays),
    standingChargePerDay: Type.Optional(tariffFields.standingChargePerDay),
    contractedPeakKw: Type.Optional(tariffFields.contractedPeakKw),
    note: Type.Optional(tariffFields.note),
    demandChargePerKw: Type.Optional(tariffFields.demandChargePerKw),
    demandChargeBasis: Type.Optional(tariffFields.demandChargeBasis),
    demandChargeMinimumKw: Type.Optional(tariffFields.demandChargeMinimumKw),
    commodity: Type.Optional(TariffCommodity),
    feedInPrice: Type.Optional(tariffFields.feedInPrice),
  },
  { additionalProperties: false },
);
export const TariffUpdate = Type.Partial(Type.Object(tariffFields), { additionalProperties: false });
