// /api/analysis: what an energy manager asks of the figures: comparisons, demand charges, baselines, EnPIs.
import type { EnergyFigures } from '../energy/index.ts';
import type { MeterDirectory } from '../metering/index.ts';
import type { AnomalyWatch } from './anomalies.ts';
import type { Baselines } from './baselines.ts';
import type { Comparisons } from './comparisons.ts';
import type { DemandCharges } from './demandCharges.ts';
import type { Enpis } from './enpi.ts';
import type { HourlyBaselines } from './hourlyBaselines.ts';
import type { LoadSheddingConfig } from './loadShedding.ts';
import type { PeakWarnings } from './peakWarnings.ts';
import { BadRequest, NotFound } from '../platform/errors.ts';
import { defineRoute } from '../platform/http/route.ts';
import { ErrorBody } from '../platform/http/schemas.ts';
import {
  AnomalyCheckBody,
  AnomalyFindings,
  BaselineBody,
  BaselineQuery,
  HourlyBaselineBody,
  HourlyBaselineQuery,
  LoadSheddingBody,
  LoadSheddingView,
  CompareQuery,
  ComparisonBody,
  DemandChargeBody,
  DriverBody,
  DriverList,
  EnpiBody,
  EnpiQuery,
  FloorAreaList,
  MonthQuery,
  PeakWarningList,
} from './schemas.ts';

const tags = ['analysis'];

/** meterId or area or neither; an unknown meter is 404, an unknown area 404 too (it has no meters to sum). */
function target(energy: AnalysisRouteNeeds['energy'], query: { meterId?: number; area?: string }): { meterId?: number; area?: string } {
  if (query.meterId !== undefined && query.area !== undefined)
    throw new BadRequest('Invalid query', [{ path: 'query.area', message: 'give meterId or area, not both' }]);
  if (query.meterId !== undefined) {
    energy.meters.get(query.meterId);
    return { meterId: query.meterId };
  }
  if (query.area !== undefined) {
    if (!energy.figures.areaNames().includes(query.area)) throw new NotFound('No meter counts towards this area');
    return { area: query.area };
  }
  return {};
}

export type AnalysisRouteNeeds = {
  energy: { meters: Pick<MeterDirectory, 'get'>; figures: EnergyFigures };
  analysis: {
    comparisons: Comparisons;
    demandCharges: DemandCharges;
    peakWarnings: PeakWarnings;
    loadShedding: LoadSheddingConfig;
    baselines: Baselines;
    hourlyBaselines: HourlyBaselines;
    enpis: Enpis;
    /** The energy anomaly check: the hourly job (buildAnomalyChecks) and POST /api/analysis/anomalies/check share it. */
    anomalies: AnomalyWatch;
  };
};

export function analysisRoutes({ energy, analysis }: AnalysisRouteNeeds) {
  const { baselines, hourlyBaselines, enpis, anomalies } = analysis;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/analysis/compare',
      access: 'viewer',
      summary: 'A period of the site, an area or a meter against the previous period and the same period a year earlier',
      description:
        'A year earlier, one rule: day, week and custom (periods of days) compare with the same days 364 days earlier (the same weekdays); month and year (calendar periods) with the same calendar period a year earlier. ' +
        'period=month also answers weatherNormalised: the change against the previous month normalised for weather (or null with the reasons). ' +
        'A period still running is cut like for like: its whole days and the finished 15-minute intervals of today, and each reference cut at the same point (partial: true). ' +
        'complete: false with missingDays where a meter of the target has no stored day. Changes nothing.',
      tags,
      schemas: { query: CompareQuery, response: { 200: ComparisonBody, 400: ErrorBody, 404: ErrorBody } },
      // A kept comparison (src/platform/db/kept.ts) is the same frozen object until it changes: its validated JSON is sent again.
      reusesBody: true,
      handler: ({ query }) => {
        if (query.period === 'custom' && query.at !== undefined)
          throw new BadRequest('Invalid query', [{ path: 'query.at', message: 'a custom period takes from and to' }]);
        if (query.period !== 'custom' && (query.from !== undefined || query.to !== undefined))
          throw new BadRequest('Invalid query', [{ path: 'query.from', message: 'from and to are for period=custom' }]);
        return analysis.comparisons.compare(query.period, target(energy, query), { at: query.at, from: query.from, to: query.to });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/demand-charges',
      access: 'viewer',
      summary: "A month's demand charge (capacity tariff): billed kW, the charge, and the month's cost with it; the running month so far",
      description:
        "billedKw = max(minimumKw, the month's highest site 15-minute mean) or, for basis rolling_12_month_average, max(minimumKw, the mean of the monthly peaks of the 12 months ending with it). " +
        'demandCharge = demandChargePerKw × billedKw, priced by the tariff version in effect on the first day of the month. Changes nothing.',
      tags,
      schemas: { query: MonthQuery, response: { 200: DemandChargeBody, 400: ErrorBody } },
      handler: ({ query }) => analysis.demandCharges.month(query.month ?? energy.figures.today().slice(0, 7)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/peak-warnings',
      access: 'viewer',
      summary: 'Peak warnings: each 15-minute window whose projected mean passed the contracted peak, and how early it warned',
      description:
        "After each collection the window's mean is projected as (energy so far + the site's demand now × time left) ÷ 15 min; above the tariff's contractedPeakKw " +
        `(after the window's first minute) an alert with code site.demand.warning is raised, which the notification rules can mail. This list changes nothing.`,
      tags,
      schemas: { response: { 200: PeakWarningList } },
      handler: () => ({ items: analysis.peakWarnings.list() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/baseline',
      access: 'viewer',
      summary: 'A weather- and day-type-normalised baseline of daily energy, its ASHRAE Guideline 14 fit, and expected vs actual with CUSUM after it',
      description:
        'Fits kWh/day = a + b·HDD + c·CDD + d·weekend + e·holiday by least squares over [baselineFrom, baselineTo). Degree days come from the hourly means of the ' +
        "gateway's outdoor temperature point (read from its history once, then kept): HDD = Σ max(0, heatingBaseC − T_h) ÷ hours, CDD likewise above coolingBaseC. " +
        "Holidays: the building's, those given (the tariff versions' holidays are billing days, not used); the holiday term is fitted only on 5 holidays or more. With reportFrom: expected vs actual per day, savings = expected − actual, CUSUM = Σ (actual − expected). " +
        'Whole days only: a day counts when every interval of every meter of the target is stored (partialBaselineDays / report.partialDays list the others); a day without temperature is a missing observation. ' +
        'method=caltrack-daily or caltrack-hourly fits the CalTRACK 2.0 reference method instead, over the same days, with the same guard rails (reference says what it chose). ' +
        'Changes nothing but the kept outdoor temperatures (days not yet kept are read from the gateway and stored, one read at a time per service, ' +
        'at most 366 days per request: 400 beyond; a temperatureCode other than temp.outdoor is read from the gateway for admins only: 403 for others while days are not kept).',
      tags,
      schemas: { query: BaselineQuery, response: { 200: BaselineBody, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody } },
      handler: ({ query, user }) => baselines.fit({ ...query, target: target(energy, query), anyTemperatureCode: user.role === 'admin' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/baseline/hourly',
      access: 'viewer',
      summary:
        'An hourly baseline (per hour of the day or of the week) on degree-hours and day type, its ASHRAE Guideline 14 fit at the hourly limits, and expected vs actual with CUSUM per hour',
      description:
        'Fits, per slot s (the local hour, or weekday × 24 + hour), kWh in an hour = a_s + b_s·HDH + c_s·CDH + d_s·weekend + e_s·holiday by least squares over the hours of [baselineFrom, baselineTo) ' +
        "(by=hour-of-week has no weekend term: the slot is the weekday). HDH = max(0, heatingBaseC − T), CDH = max(0, T − coolingBaseC), T the hour's mean of the gateway's outdoor temperature point. " +
        'An hour counts when all four of its 15-minute intervals hold data from every meter of the target and the temperature is known. ' +
        'Guideline 14 statistics over all baseline hours, n hours and p coefficients of all slots, with the hourly limits CV(RMSE) ≤ 30 %, |NMBE| ≤ 10 % (and R² ≥ 0.75). ' +
        'With reportFrom: expected vs actual per hour, CUSUM = Σ (actual − expected), summed per day; hours are listed for periods of at most 31 days. ' +
        "A reporting period reaching into today counts today's hours that have ended, with the gateway's outdoor temperature so far (not kept until the day is over). " +
        'Changes nothing but the kept outdoor temperatures (as the daily baseline).',
      tags,
      schemas: {
        query: HourlyBaselineQuery,
        response: { 200: HourlyBaselineBody, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody },
      },
      handler: ({ query, user }) => hourlyBaselines.fit({ ...query, target: target(energy, query), anyTemperatureCode: user.role === 'admin' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/load-shedding',
      access: 'admin',
      summary: 'Load shedding: whether it runs, its safety times and its points with their state',
      description:
        'Admin only. Each point: its priority, shed and restore values, whether it is shed now and the last write the gateway did not confirm. Changes nothing.',
      tags,
      schemas: { response: { 200: LoadSheddingView } },
      handler: () => analysis.loadShedding.view(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/analysis/load-shedding',
      access: 'admin',
      summary: 'Replace the load-shedding settings and point list (off by default)',
      description:
        "Admin only; one audited transaction. When enabled, after each collection: if the peak warning's projection of the running 15-minute window passes the contracted peak, " +
        'the next point by priority (lowest number first) is written its shedValue through the gateway and read back; a write the gateway does not confirm is an alert ' +
        '(energy.load_shedding.unconfirmed) and the point is not counted as shed. Shed points are restored, last shed first, once their window is over and the projection is at most ' +
        '95 % of the contract, never before minOffSec, and always after maxShedSec (counted on a clock that does not step), whether or not collections run. ' +
        'Turning it off restores every shed point before the answer (waited for up to 8 s). A restore the gateway does not confirm is a critical alert ' +
        '(energy.load_shedding.restore_failed), tried again every 5 s, and listed in /api/health. Every write is audited. A point shed now cannot be removed (409).',
      example: {
        enabled: true,
        minOffSec: 300,
        maxShedSec: 1800,
        points: [
          { code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 },
          { code: 'sp.zone1', priority: 2, shedValue: 26, restoreValue: 21.5 },
        ],
      },
      tags,
      schemas: { body: LoadSheddingBody, response: { 200: LoadSheddingView, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => analysis.loadShedding.replaceAndApply(body, user),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/floor-areas',
      access: 'viewer',
      summary: 'Floor areas of the areas (for kWh per m²)',
      description:
        "Every area's floor area in m², as last set by PUT; GET /api/analysis/enpi divides an area's kWh by it and the site's by their sum. Changes nothing.",
      tags,
      schemas: { response: { 200: FloorAreaList } },
      handler: () => ({ areas: enpis.listFloorAreas() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/analysis/floor-areas',
      access: 'operator',
      summary: 'Replace the set of floor areas (an area not listed loses its figure)',
      description:
        'One transaction: listed areas are created or updated by name, every area not listed loses its floor area (an empty list clears them all); audited with the set before and after. ' +
        'An area named twice is 400. Answers the stored set.',
      example: {
        areas: [
          { area: 'Office', floorAreaM2: 1250 },
          { area: 'Plant room', floorAreaM2: 180.5 },
        ],
      },
      tags,
      schemas: { body: FloorAreaList, response: { 200: FloorAreaList, 400: ErrorBody } },
      handler: ({ body, user }) => ({ areas: enpis.replaceFloorAreas(body.areas, user) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/drivers',
      access: 'viewer',
      summary: 'Monthly production or occupancy figures the EnPIs divide by',
      description:
        "Every stored driver figure (name, month, value, unit), as set by PUT; GET /api/analysis/enpi?driver=name divides each month's kWh by that month's value. Changes nothing.",
      tags,
      schemas: { response: { 200: DriverList } },
      handler: () => ({ items: enpis.listDrivers() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/analysis/drivers',
      access: 'operator',
      summary: 'Set monthly figures of named drivers (a name and month already set is overwritten)',
      description:
        'Stores each listed value by name and month in one transaction, overwriting a figure already set for that name and month; figures not listed are kept. ' +
        'unit defaults to an empty string. Audited. Answers every stored driver figure.',
      example: {
        values: [
          { name: 'units produced', month: '2026-10', value: 18400, unit: 'units' },
          { name: 'units produced', month: '2026-11', value: 17250, unit: 'units' },
        ],
      },
      tags,
      schemas: { body: DriverBody, response: { 200: DriverList, 400: ErrorBody } },
      handler: ({ body, user }) => ({
        items: enpis.setDrivers(
          body.values.map((v) => ({ ...v, unit: v.unit ?? '' })),
          user,
        ),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/analysis/enpi',
      access: 'viewer',
      summary: 'EnPIs per month: kWh per m², per degree day and per unit of a monthly driver, for the site, an area or a meter',
      description:
        "kwhPerM2 = kWh ÷ floor area; kwhPerDegreeDay = kWh ÷ (HDD + CDD) of the month (hourly outdoor temperature means, as the baseline); kwhPerDriverUnit = kWh ÷ the driver's figure. Changes nothing but the kept outdoor temperatures (as the baseline).",
      tags,
      schemas: { query: EnpiQuery, response: { 200: EnpiBody, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody } },
      handler: ({ query, user }) => enpis.monthly({ ...query, target: target(energy, query), anyTemperatureCode: user.role === 'admin' }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/analysis/anomalies/check',
      access: 'operator',
      summary: 'Check a finished site day for energy anomalies now (the service checks each day once it is over)',
      description:
        'For the site and each area, against the hourly model (hour of day, degree-hours, day type) fitted on the 28 days before: the night (00:00–05:00) above its one-sided 99 % prediction ' +
        'interval (and 5 %) on the day and the day before, and not on the day before that (a new episode, raised once); a weekend day above its 99.9 % interval; and ' +
        "the day's energy more than 3 standard errors (and 10 %) from its daily baseline fitted on the 365 days before. A day's findings are one alert (code energy.anomaly.<kind>, or energy.anomaly.digest for several) with the evidence. " +
        'day must be over (before today, site time zone), else 400.',
      example: { day: '2026-11-02' },
      tags,
      schemas: { body: AnomalyCheckBody, response: { 200: AnomalyFindings, 400: ErrorBody } },
      handler: async ({ body }) => {
        if (body.day >= energy.figures.today()) throw new BadRequest('Invalid body', [{ path: 'body.day', message: 'must be a day that is over' }]);
        return { findings: await anomalies.check(body.day) };
      },
    }),
  ];
}
