// /api/energy: the hand-entered area cards and the figures computed from the interval store (summary, series, peaks,
// CSV, completeness). Meters and the history import are metering's route tables, tariffs pricing's.
import type { MeterDirectory } from '../metering/index.ts';
import type { AreaCards } from './areaCards.ts';
import type { EnergyFigures } from './figures.ts';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { BadRequest } from '../platform/errors.ts';
import { setAttachment } from '../platform/http/attachment.ts';
import { defineRoute } from '../platform/http/route.ts';
import { ErrorBody } from '../platform/http/schemas.ts';
import { addDays } from '../platform/time/calendar.ts';
import {
  Completeness,
  CompletenessQuery,
  EnergyAreas,
  EnergyAreasBody,
  EnergySummary,
  ExportQuery,
  Peaks,
  PeaksQuery,
  PeriodQuery,
  Series,
  SeriesQuery,
} from './schemas.ts';
import { ENERGY_AREAS_EXAMPLE, ENERGY_SERIES_EXAMPLE, ENERGY_SUMMARY_EXAMPLE } from './examples.ts';

const tags = ['energy'];
/** Longest range one call may ask for, by resolution: a 15-minute year is 35,000 points; the CSV export streams. */
const MAX_DAYS = { '15min': 366, hour: 366 * 2, day: 366 * 10, month: 366 * 20, csv: 366 * 10 } as const;

/**
 * Years the energy figures answer for. The store holds nothing before 1970, and a year outside four digits broke the
 * day arithmetic (0899-05 lost its leading zero and made a range of ~1,100 years: 7-30 s and hundreds of MB).
 */
export const ENERGY_YEARS = { min: 1970, max: 2200 } as const;

function checkYear(value: string, path: string): void {
  const year = Number(value.slice(0, 4));
  if (!(year >= ENERGY_YEARS.min && year <= ENERGY_YEARS.max)) {
    throw new BadRequest('Invalid query', [{ path, message: `must be in the years ${ENERGY_YEARS.min} to ${ENERGY_YEARS.max}` }]);
  }
}

function checkRange(from: string, to: string, maxDays: number): void {
  checkYear(from, 'query.from');
  checkYear(to, 'query.to');
  if (to <= from) throw new BadRequest('Invalid query', [{ path: 'query.to', message: 'must be after from' }]);
  if (to > addDays(from, maxDays)) throw new BadRequest('Invalid query', [{ path: 'query.to', message: `at most ${maxDays} days after from` }]);
}

export type EnergyAreaRouteNeeds = { energy: { areas: AreaCards } };

export function energyAreaRoutes({ energy }: EnergyAreaRouteNeeds) {
  const { areas } = energy;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/areas',
      responseExample: ENERGY_AREAS_EXAMPLE,
      access: 'viewer',
      summary: 'Per-area energy summary cards',
      description: 'An area with meters is computed from them (source `meters`); any other area shows the figures PUT set (source `manual`).',
      tags,
      schemas: { response: { 200: EnergyAreas } },
      // Kept whole (AreaCards.view): while it is the same object, its JSON is sent again.
      reusesBody: true,
      handler: () => areas.view(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/energy/areas',
      access: 'operator',
      summary: 'Replace the set of hand-entered area cards',
      example: { areas: [{ name: 'Office', todayKwh: 120.5, monthKwh: 2400, yearKwh: 28000, powerKw: 35.2 }] },
      description:
        'One transaction: areas not listed are removed, listed ones are created or updated by name (ids are kept). ' +
        'Areas with meters are computed: listing one changes nothing and leaving it out keeps it. ' +
        'Also writes today\'s energy_daily rows (site day in the configured time zone): one per area and area "total" = the sum of todayKwh, ' +
        'which feeds GET /api/overview/energy/weekly while no meter exists. Names are unique case-insensitively; todayKwh ≤ monthKwh ≤ yearKwh.',
      tags,
      schemas: { body: EnergyAreasBody, response: { 200: EnergyAreas, 400: ErrorBody } },
      handler: ({ body, user }) => ({ areas: areas.replace(user, body.areas) }),
    }),
  ];
}

export type EnergyRouteNeeds = { energy: { figures: EnergyFigures; meters: Pick<MeterDirectory, 'get'> } };

export function energyRoutes({ energy }: EnergyRouteNeeds) {
  const { figures, meters } = energy;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/summary',
      responseExample: ENERGY_SUMMARY_EXAMPLE,
      access: 'viewer',
      summary: 'Site energy, cost and carbon per day and per area over [from, to), with peak demand',
      description: 'The same figures the reports print for the period.',
      tags,
      schemas: { query: PeriodQuery, response: { 200: EnergySummary, 400: ErrorBody } },
      handler: ({ query }) => {
        checkRange(query.from, query.to, MAX_DAYS.day);
        return figures.periodFigures(query.from, query.to);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/series',
      responseExample: ENERGY_SERIES_EXAMPLE,
      access: 'viewer',
      summary: 'Energy of a meter, an area or the site (neither given) at 15 minutes, hour, day or month',
      description:
        'Points from `from` to `to` (site days, `to` exclusive) at the resolution asked, in the configured time zone; at most 366 days at 15 minutes or hour resolution. 404 for an unknown meterId. Changes nothing.',
      tags,
      schemas: { query: SeriesQuery, response: { 200: Series, 400: ErrorBody, 404: ErrorBody } },
      handler: ({ query }) => {
        checkRange(query.from, query.to, MAX_DAYS[query.resolution]);
        if (query.meterId !== undefined && query.area !== undefined)
          throw new BadRequest('Invalid query', [{ path: 'query.area', message: 'give meterId or area, not both' }]);
        if (query.meterId !== undefined) meters.get(query.meterId);
        const target = query.meterId !== undefined ? { meterId: query.meterId } : query.area !== undefined ? { area: query.area } : {};
        return { resolution: query.resolution, timezone: figures.settings().timezone, points: figures.series(query.from, query.to, query.resolution, target) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/export.csv',
      access: 'viewer',
      summary: "One meter's 15-minute intervals as CSV (start, end, kwh, mean_kw, flags), streamed",
      description:
        'flags: 1 bad quality reading, 2 counter reset or rollover, 4 estimated over a gap the gateway history could not fill, 32 imported, 64 suspect ' +
        '(in an unconfirmed suspect run). quality: measured, estimated, suspect or missing. An empty kwh: no data.',
      tags,
      raw: { contentType: 'text/csv; charset=utf-8' },
      schemas: { query: ExportQuery, response: { 200: Type.String({ description: 'CSV' }), 400: ErrorBody, 404: ErrorBody } },
      handler: ({ query, ctx }) => {
        checkRange(query.from, query.to, MAX_DAYS.csv);
        const meter = meters.get(query.meterId);
        ctx.status = 200;
        ctx.type = 'text/csv; charset=utf-8';
        setAttachment(ctx, `meter-${meter.id}-${query.from}-${query.to}.csv`);
        ctx.body = Readable.from(figures.csv(meter.id, query.from, query.to));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/peaks',
      access: 'viewer',
      summary: "The month's highest 15-minute mean demand, per meter and for the site, with when it happened",
      description: 'month defaults to the current site month. Changes nothing.',
      tags,
      schemas: { query: Type.Partial(PeaksQuery), response: { 200: Peaks, 400: ErrorBody } },
      handler: ({ query }) => {
        if (query.month !== undefined) checkYear(query.month, 'query.month');
        return figures.peaks(query.month ?? figures.today().slice(0, 7));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/completeness',
      access: 'viewer',
      summary: 'Data completeness: per meter (and the site) and site day, the share of measured, estimated, suspect and missing intervals',
      description: 'Only intervals that have happened count. A site interval is measured when every site meter measured it, missing when any lacks it.',
      tags,
      schemas: { query: CompletenessQuery, response: { 200: Completeness, 400: ErrorBody, 404: ErrorBody } },
      handler: ({ query }) => {
        checkRange(query.from, query.to, query.meterId === undefined ? 31 : 366);
        const of = (target: { meterId?: number }) => {
          const days = figures.completeness(query.from, query.to, target);
          return { ...figures.completenessTotal(days), days };
        };
        const list = query.meterId === undefined ? figures.meterList() : [{ ...meters.get(query.meterId) }];
        return {
          from: query.from,
          to: query.to,
          timezone: figures.settings().timezone,
          site: query.meterId === undefined ? of({}) : null,
          meters: list.map((meter) => ({ meterId: meter.id, name: meter.name, ...of({ meterId: meter.id }) })),
        };
      },
    }),
  ];
}
