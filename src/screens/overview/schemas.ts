// Shapes of the KPI cards and the weekly energy chart.
import { AllUtilitiesSchema } from '../../energy/index.ts';
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../platform/http/schemas.ts';

export const OverviewStats = Type.Object({
  energyTodayKwh: Type.Number({
    description:
      "the site's grid import since its midnight (electricity from the site meters once meters exist, else the sum of todayKwh over the area cards); every utility: allUtilitiesMonth and commodities",
  }),
  energyMonthKwh: Type.Number({ description: "the site's grid import this month (electricity, same source)" }),
  powerKw: Type.Number({ description: "the site's current demand" }),
  costToday: Type.Number({
    description: "today's energy at the tariff of each interval plus the day's standing charge (without meters: energyTodayKwh × the platform price)",
  }),
  currency: Type.String(),
  carbonTodayKg: Type.Number({ description: "today's grid import × the electricity tariff's carbon factor (scope 2 of electricity only)" }),
  costMonth: Type.Number({ description: 'this month, as costToday' }),
  carbonMonthKg: Type.Number({ description: 'this month, as carbonTodayKg' }),
  activeAlerts: Type.Integer({
    description:
      'alerts with status active, not shelved now and still in alarm (cleared at the source: GET /api/alerts/counts `cleared`): the Active tab, as GET /api/alerts/counts `active`',
  }),
  criticalAlerts: Type.Integer({ description: 'active alerts (as activeAlerts) with level critical' }),
  openFaults: Type.Integer({ description: 'faults open or in progress' }),
  maintenanceDue: Type.Integer({ description: 'planned or in-progress maintenance scheduled within the next 7 days, overdue included' }),
  maintenanceOverdue: Type.Integer({ description: 'planned or in-progress maintenance scheduled before now' }),
  generatedAt: Timestamp,
  coverage: Type.Optional(
    Type.Object(
      {
        today: Type.Union([Type.Number(), Type.Null()], { description: "share of today's intervals so far with data (1 − missing)" }),
        month: Type.Union([Type.Number(), Type.Null()], { description: "share of this month's intervals so far with data" }),
      },
      { description: 'with meters: how complete the headline figures are (a month resting on 27 % of its intervals says 0.27)' },
    ),
  ),
  allUtilitiesMonth: Type.Optional({
    ...AllUtilitiesSchema,
    description: 'with meters: this month so far over every utility (energyMonthKwh, costMonth and carbonMonthKg are grid electricity only), carbon by scope',
  }),
  demandChargeMonth: Type.Optional(Type.Number({ description: "with meters: this month's demand charge so far (capacity tariff), included in costMonth" })),
  comparison: Type.Optional(
    Type.Object(
      {
        todayVsYesterdayPercent: Type.Union([Type.Number(), Type.Null()], { description: 'today so far against yesterday up to the same 15-minute interval' }),
        todayVsLastYearPercent: Type.Union([Type.Number(), Type.Null()], { description: 'against the same weekday 52 weeks ago, up to the same interval' }),
        monthVsPreviousPercent: Type.Union([Type.Number(), Type.Null()], {
          description: 'this month so far against the previous month over the same elapsed days',
        }),
        monthVsPreviousWeatherNormalisedPercent: Type.Union([Type.Number(), Type.Null()], {
          description:
            "the same change normalised for weather (whole days; the site's degree-day model, IPMVP routine adjustment): weatherNormalised.percent of GET /api/analysis/compare?period=month; null when it cannot be defended (the answer there says why)",
        }),
        complete: Type.Boolean({ description: 'false when a site meter lacks a day in any of the periods compared' }),
      },
      { description: 'with meters: like-for-like site comparisons (GET /api/analysis/compare gives the full answer)' },
    ),
  ),
  // Issue 26: every utility this month; GET /api/energy/commodities gives the full answer.
  commodities: Type.Optional(
    Type.Array(
      Type.Object({
        commodity: Type.String(),
        unit: Type.String({ description: 'of quantity: kWh (electricity, heat) or m³ (gas, water)' }),
        quantity: Type.Union([Type.Number(), Type.Null()], {
          description: 'this month so far; electricity: its consumption (grid import − export + generation); null: no data',
        }),
        kwh: Type.Union([Type.Number(), Type.Null()], { description: 'energy; null for water, and with no data' }),
        cost: Type.Union([Type.Number(), Type.Null()], { description: "at the commodity's tariff; null without one, and with no data" }),
      }),
      { description: 'with meters: each metered commodity this month, in its own unit (never m³ added to kWh)' },
    ),
  ),
});
export type OverviewStatsView = Static<typeof OverviewStats>;

const Share = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
/** As in the energy figures: shares of the intervals that have happened (hand-entered totals: of the days). */
const Shares = {
  measured: Share('share measured (imported history counts as measured; a hand-entered day total too)'),
  estimated: Share('share estimated (a gap the gateway history could not fill, spread evenly)'),
  missing: Share('share with no data (counted as nothing in totalKwh)'),
};

export const WeeklyEnergy = Type.Object({
  days: Type.Array(Type.Object({ day: Type.String({ format: 'date' }), kwh: Type.Union([Type.Number(), Type.Null()]), ...Shares }), {
    minItems: 7,
    maxItems: 7,
    description: 'the last 7 site days, oldest first, today last; kwh null where there is no data (missing = 1): no data is never 0',
  }),
  totalKwh: Type.Number({ description: 'the sum of the days with data; completeness says how much of the week it rests on' }),
  completeness: Type.Object(Shares, { description: 'the week as a whole, weighted by intervals (hand-entered totals: by days)' }),
  timezone: Type.String({ description: 'the site time zone the days are counted in' }),
});
export type WeeklyEnergyView = Static<typeof WeeklyEnergy>;
