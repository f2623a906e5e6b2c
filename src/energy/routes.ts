// /api/energy: area cards, meters, tariffs, and the figures computed from the interval store (summary, series, peaks, CSV).
import type { IotGateway } from '../gateway/index.ts';
import type { HistoryImport, ImportJobs, MeterDirectory, Restatement, restateCosts } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Actor } from '../platform/db/auditTrail.ts';
import type { AreaCards } from './areaCards.ts';
import type { EnergyFigures } from './figures.ts';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { BadRequest, UnsupportedMediaType } from '../platform/errors.ts';
import { setAttachment } from '../platform/http/attachment.ts';
import { defineRoute, Reply } from '../platform/http/route.ts';
import { ErrorBody, IdParams, Page, PageQuery } from '../platform/http/schemas.ts';
import { addDays } from '../platform/time/calendar.ts';
import {
  Completeness,
  CompletenessQuery,
  EnergyAreas,
  EnergyAreasBody,
  EnergySummary,
  ExportQuery,
  ImportJob,
  ImportJobQuery,
  ImportQuery,
  ImportReport,
  Meter,
  MeterCreate,
  MeterProposals,
  MeterUpdate,
  Peaks,
  PeaksQuery,
  PeriodQuery,
  Series,
  SeriesQuery,
  TariffCreate,
  TariffUpdate,
  TariffVersion,
} from './schemas.ts';
import { ENERGY_AREAS_EXAMPLE, ENERGY_SERIES_EXAMPLE, ENERGY_SUMMARY_EXAMPLE } from './examples.ts';

const tags = ['energy'];
const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
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

/** Re-prices the stored days a back-dated tariff or calorific version covers, audited (built by the energy module). */
export type Restate = (scope: Parameters<typeof restateCosts>[1], actor: Actor | null) => Promise<Restatement>;

export type EnergyRouteNeeds = {
  energy: {
    meters: MeterDirectory;
    tariffs: Tariffs;
    figures: EnergyFigures;
    areas: AreaCards;
    history: HistoryImport;
    importJobs: ImportJobs;
    restate: Restate;
  };
  iot: IotGateway;
};

export function energyRoutes({ energy, iot }: EnergyRouteNeeds) {
  const { meters, tariffs, figures, areas, history, importJobs } = energy;
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

    defineRoute({
      method: 'GET',
      path: '/api/meters',
      access: 'viewer',
      summary: 'Meters read from the gateway (and virtual meters built on them)',
      description: 'A page of meters: gateway energy and power meters and virtual meters (sums and differences of others). Changes nothing.',
      tags,
      schemas: { query: ListQuery, response: { 200: Page(Meter) } },
      handler: ({ query }) => meters.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/meters',
      access: 'admin',
      summary: 'Add a meter',
      example: { name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true },
      description: 'A meter read for the first time is backfilled from the gateway history (7 days) by the next collection.',
      tags,
      schemas: { body: MeterCreate, response: { 201: Meter, 400: ErrorBody, 409: ErrorBody } },
      handler: ({ body, user }) => new Reply(201, meters.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/meters/discover',
      access: 'admin',
      summary: "Meters proposed from the gateway's point catalogue (energy counters and power points)",
      description:
        "Reads the gateway's point catalogue and proposes a meter for each energy counter and power point not yet a meter; nothing is created. 502 when the gateway fails.",
      tags,
      schemas: { response: { 200: MeterProposals, 502: ErrorBody } },
      handler: () => meters.discover(iot),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/meters/:id',
      access: 'viewer',
      summary: 'Read one meter',
      description: 'One meter. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Meter, 404: ErrorBody } },
      handler: ({ params }) => meters.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/meters/:id',
      access: 'admin',
      summary: 'Change a meter (partial; its kind never changes)',
      description: 'Changes the fields sent; the stored intervals stay. 409 when another meter has the name or reads the point already. Audited.',
      example: { enabled: false },
      tags,
      schemas: { params: IdParams, body: MeterUpdate, response: { 200: Meter, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => meters.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/meters/:id',
      access: 'admin',
      summary: 'Remove a meter and its stored intervals',
      description: '409 while a virtual meter is built on it.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => {
        meters.delete(params.id, user);
        return new Reply(204, null);
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/api/energy/tariffs',
      access: 'viewer',
      summary: 'Tariff versions, oldest first',
      description: 'A page of tariff versions: each applies from its validFrom until the next. Changes nothing.',
      tags,
      schemas: { query: ListQuery, response: { 200: Page(TariffVersion) } },
      handler: ({ query }) => tariffs.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/tariffs',
      access: 'admin',
      summary: 'Add a tariff version (from a future day, or back-dated from a bill)',
      example: {
        validFrom: '2099-01-01',
        price: 0.28,
        bands: [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.34 }],
        holidays: ['2099-12-25'],
        standingChargePerDay: 0.45,
        carbonFactor: 0.38,
      },
      description:
        'A version applies from validFrom until the next version. A validFrom of today or earlier (a bill entered later) restates the stored cost of every ' +
        'day it decides, up to the next version or today: each day of the meters of its commodity is priced again, and an audit entry (restate_costs) ' +
        'records the cost before and after. A version in effect is never changed or removed (409): add a version instead.',
      tags,
      schemas: { body: TariffCreate, response: { 201: TariffVersion, 400: ErrorBody, 409: ErrorBody } },
      handler: async ({ body, user }) => {
        const version = tariffs.create(body, user);
        // Back-dated (from a bill): the stored costs of the days it decides are restated now, audited.
        const days = tariffs.restatedDays(version);
        if (days) await energy.restate({ ...days, commodity: version.commodity, reason: { resource: 'tariff_versions', resourceId: version.id } }, user);
        return new Reply(201, version);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/tariffs/:id',
      access: 'viewer',
      summary: 'Read one tariff version',
      description: 'One tariff version. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: TariffVersion, 404: ErrorBody } },
      handler: ({ params }) => tariffs.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/energy/tariffs/:id',
      access: 'admin',
      summary: 'Change a version that is not yet in effect (partial)',
      description:
        'Changes the fields sent of a version whose validFrom is still in the future (409 once it is in effect, so no computed cost changes). Audited.',
      example: { price: 0.3, note: 'Supplier letter of 2026-11-02' },
      tags,
      schemas: { params: IdParams, body: TariffUpdate, response: { 200: TariffVersion, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => tariffs.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/energy/tariffs/:id',
      access: 'admin',
      summary: 'Remove a version that is not yet in effect',
      description: 'Removes a version whose validFrom is still in the future (409 once it is in effect). Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => {
        tariffs.delete(params.id, user);
        return new Reply(204, null);
      },
    }),

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
    defineRoute({
      method: 'POST',
      path: '/api/energy/import',
      access: 'admin',
      summary: 'Import past intervals or counter readings from a CSV (dryRun reports what it would change)',
      description:
        'Body: the CSV itself (Content-Type: text/csv), a header line then one row per interval or reading. Columns: `meter` (id or code), ' +
        "`start` (ISO 8601 with Z or an offset, on a 15-minute boundary) and either `kwh` (the interval's energy; an optional `end` makes a row " +
        'cover several intervals, spread evenly and flagged estimated) or `reading` (a counter in kWh: steps are checked like live readings: ' +
        'small decreases are held as jitter, a reset only a real drop, a rollover only at the range, spans over 7 days left missing). ' +
        "Separators `,` `;` (then a decimal comma) or tab. Refused rows: a time in the future or today (the collector's), more than 3660 days ago, " +
        'negative energy or an implausible step. Bad rows (400) and refused rows (400; a dry run reports them) name their lines; an overlap ' +
        'with stored intervals is 409 unless replace=true. Nothing is written when the file is refused. Imported intervals are measured ' +
        '(flag 32). Imports run one at a time; each is audited (import.start, import). At most 5,000,000 rows or 256 MiB.',
      tags,
      rawBody: { contentType: 'text/csv' },
      example: 'meter,start,kwh\nmeter.main.kwh,2025-01-06T00:00:00Z,12.5\nmeter.main.kwh,2025-01-06T00:15:00Z,12.75\n',
      schemas: { query: ImportQuery, response: { 200: ImportReport, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: ({ query, user, ctx }) => {
        if (!ctx.is('text/csv', 'text/plain')) throw new UnsupportedMediaType('Send the CSV as the body (Content-Type: text/csv)');
        const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
        if (encoding !== 'identity') throw new UnsupportedMediaType('Send the CSV uncompressed (no Content-Encoding)');
        return history.run(ctx.req, { dryRun: query.dryRun, replace: query.replace }, user);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/import/jobs',
      access: 'admin',
      summary: 'Import past intervals as a background job: checked in the request, written after it with progress and cancel',
      description:
        'The same CSV, rules and refusals as POST /api/energy/import (bad or refused rows 400, an overlap 409 unless replace=true: nothing ' +
        'is queued then). A file that passes answers 202 with the job; its write runs in slices (one at a time with other imports) and ' +
        'GET /api/energy/import/jobs/{id} tells its progress and, once done, its report. POST …/cancel stops it between two slices and ' +
        'takes back every interval it wrote (the old values with replace; the virtual meters and month peaks follow), audited as ' +
        'import.cancel. Jobs are kept in memory (the last 20); a restart mid-write leaves the slices written (the audit trail shows ' +
        'import.start without import).',
      tags,
      rawBody: { contentType: 'text/csv' },
      example: 'meter,start,kwh\nmeter.main.kwh,2025-01-06T00:00:00Z,12.5\nmeter.main.kwh,2025-01-06T00:15:00Z,12.75\n',
      schemas: { query: ImportJobQuery, response: { 202: ImportJob, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody } },
      handler: async ({ query, user, ctx }) => {
        if (!ctx.is('text/csv', 'text/plain')) throw new UnsupportedMediaType('Send the CSV as the body (Content-Type: text/csv)');
        const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
        if (encoding !== 'identity') throw new UnsupportedMediaType('Send the CSV uncompressed (no Content-Encoding)');
        return new Reply(202, await importJobs.start(ctx.req, { replace: query.replace }, user));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/energy/import/jobs/:id',
      access: 'admin',
      summary: 'A background import: its state, progress (done of total steps) and, once done, its report',
      description: 'Poll it while the state is running or cancelling. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: ImportJob, 404: ErrorBody } },
      handler: ({ params }) => importJobs.get(params.id),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/import/jobs/:id/cancel',
      access: 'admin',
      summary: 'Cancel a background import: it stops between two slices and takes back what it wrote',
      description: 'Answers the job, now cancelling; it ends cancelled once its written intervals are taken back. A job that has ended: 409.',
      tags,
      schemas: { params: IdParams, response: { 200: ImportJob, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params }) => importJobs.cancel(params.id),
    }),
  ];
}
