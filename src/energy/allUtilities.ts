// The headline over every utility (issue 41 item 7): cost and carbon of electricity import, gas, heat and water for a
// period, carbon split by GHG Protocol scope. Built from the commodities view (src/energy/commodities.ts), so each part
// is the figure GET /api/energy/commodities gives for the same period; nothing is priced twice.
import { Type } from '@sinclair/typebox';
import type { Commodity } from '../platform/db/schema/index.ts';
import { stringEnum } from '../platform/http/schemas.ts';
import type { CommodityFiguresView } from './commodities.ts';
import { round } from '../platform/numbers.ts';

/**
 * - `costTotal`: electricity import cost (energy and standing charge, before feed-in revenue and demand charge) + gas
 *   + heat + water cost; null when no utility has a priced figure.
 * - `scope1Kg`: on-site combustion (gas). `scope2Kg`: purchased electricity (grid import) and purchased heat.
 *   `carbonKg` = scope 1 + scope 2. Water's carbon factor, if a tariff sets one, is scope 3 and left out of the headline.
 * - `unpriced`: utilities with data but no tariff version on a day with data: their cost and carbon are not in the sums
 *   (the headline is then incomplete, and says which).
 * - `energyKwh`: all fuels in kWh (electricity consumption incl. self-consumed PV, gas converted, heat), never water.
 */
export type AllUtilities = {
  costTotal: number | null;
  carbonKg: number | null;
  scope1Kg: number | null;
  scope2Kg: number | null;
  energyKwh: number;
  unpriced: Commodity[];
};

const SCOPE: Record<Commodity, 1 | 2 | 3> = { gas: 1, electricity: 2, heat: 2, water: 3 };

export function allUtilities(view: CommodityFiguresView): AllUtilities {
  let cost: number | null = null;
  const scopes: Record<1 | 2, number | null> = { 1: null, 2: null };
  const unpriced: Commodity[] = [];
  for (const entry of view.commodities) {
    // Electricity counts where the grid import has data (its consumption also needs the PV and export meters).
    if ((entry.commodity === 'electricity' ? view.electricity.importKwh : entry.quantity) === null) continue;
    // Electricity: the import's cost (the cover's cost); the commodity's own cost is net of feed-in revenue.
    const entryCost = entry.commodity === 'electricity' ? view.electricity.importCost : entry.cost;
    if (entryCost === null || entry.carbonKg === null) {
      unpriced.push(entry.commodity);
      continue;
    }
    cost = (cost ?? 0) + entryCost;
    const scope = SCOPE[entry.commodity];
    if (scope !== 3) scopes[scope] = (scopes[scope] ?? 0) + entry.carbonKg;
  }
  const carbon = scopes[1] === null && scopes[2] === null ? null : (scopes[1] ?? 0) + (scopes[2] ?? 0);
  return {
    costTotal: cost === null ? null : round(cost, 2),
    carbonKg: carbon === null ? null : round(carbon, 3),
    scope1Kg: scopes[1] === null ? null : round(scopes[1], 3),
    scope2Kg: scopes[2] === null ? null : round(scopes[2], 3),
    energyKwh: view.energyKwh,
    unpriced,
  };
}

const NullableKg = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
/** The OpenAPI shape of {@link AllUtilities}, for every answer that carries the headline beside its grid-only figures. */
export const AllUtilitiesSchema = Type.Object(
  {
    costTotal: Type.Union([Type.Number(), Type.Null()], {
      description:
        'electricity import cost (energy + standing charge, before feed-in revenue and demand charge) + gas + heat + water at their tariffs; null: no utility priced',
    }),
    carbonKg: NullableKg('scope 1 + scope 2 (kg CO₂e); water (scope 3) is left out'),
    scope1Kg: NullableKg('GHG Protocol scope 1, direct emissions: gas burnt on site (gas kWh × its tariff carbon factor); null: no gas data'),
    scope2Kg: NullableKg('scope 2, purchased energy (location-based): grid import × electricity factor + heat × heat factor'),
    energyKwh: Type.Number({
      description: 'all fuels in kWh: electricity consumption (grid import − export + PV generation) + gas (converted) + heat; never water',
    }),
    unpriced: Type.Array(stringEnum(['electricity', 'gas', 'water', 'heat'] as const), {
      description: 'utilities with data but no tariff version on a day with data: left out of costTotal and the carbon sums',
    }),
  },
  { description: 'the headline over every utility (docs/energy-management.md "Headline over all utilities")' },
);
