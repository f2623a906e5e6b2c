// Shapes of the gas calorific value versions and the figures by commodity (issue 26).
import { Type } from '@sinclair/typebox';
import { displayTextPattern, Timestamp } from '../http/schemas.ts';

const Day = (description: string) => Type.String({ format: 'date', description });

const calorificFields = {
  validFrom: Day('first site day the version applies to; after today, so no past gas energy ever changes'),
  kwhPerM3: Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'calorific value in kWh per m³, as on the gas bill (natural gas: about 10–12)' }),
  correctionFactor: Type.Number({ exclusiveMinimum: 0, maximum: 10, description: 'volume correction to standard temperature and pressure (1 when the bill has none)' }),
  note: Type.String({ maxLength: 500, pattern: displayTextPattern(true) }),
};
export const CalorificVersion = Type.Object({ id: Type.Integer(), ...calorificFields, createdAt: Timestamp, updatedAt: Timestamp });
export const CalorificCreate = Type.Object(
  { ...calorificFields, correctionFactor: Type.Optional(calorificFields.correctionFactor), note: Type.Optional(calorificFields.note) },
  { additionalProperties: false },
);
export const CalorificUpdate = Type.Partial(Type.Object(calorificFields), { additionalProperties: false });
