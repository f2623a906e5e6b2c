// Shapes of the per-area energy summary cards.
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../http/schemas.ts';

const Kwh = (description: string) => Type.Number({ minimum: 0, maximum: 1e12, description });

export const EnergyArea = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  todayKwh: Type.Number(),
  monthKwh: Type.Number(),
  yearKwh: Type.Number(),
  powerKw: Type.Number({ description: 'current demand' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type EnergyAreaView = Static<typeof EnergyArea>;

export const EnergyAreaInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S(.*\\S)?$', description: 'unique (case-insensitive); "total" is reserved for the site sum' }),
    todayKwh: Kwh('consumption since the site midnight'),
    monthKwh: Kwh('consumption this month, at least todayKwh'),
    yearKwh: Kwh('consumption this year, at least monthKwh'),
    powerKw: Type.Number({ minimum: 0, maximum: 1e9, description: 'current demand' }),
  },
  { additionalProperties: false },
);
export type EnergyAreaInputValue = Static<typeof EnergyAreaInput>;

export const EnergyAreasBody = Type.Object(
  { areas: Type.Array(EnergyAreaInput, { maxItems: 200 }) },
  { description: 'The complete set: areas not listed are removed. An empty list removes every area.' },
);

export const EnergyAreas = Type.Object({ areas: Type.Array(EnergyArea, { description: 'sorted by name' }) });
