// GET /api/exports/energy: many meters' intervals in one streamed CSV or XLSX (viewer and up).
import { siteSettings } from '../../site/index.ts';
import type { Db } from '../../platform/db/client.ts';
import { PassThrough, Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { setAttachment } from '../../platform/http/attachment.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody, stringEnum } from '../../platform/http/schemas.ts';
import { type EnergyExport, MAX_EXPORT_DAYS } from './service.ts';

const ExportQuery = Type.Object(
  {
    from: Type.String({ format: 'date', description: 'first site day' }),
    to: Type.String({ format: 'date', description: 'the day after the last (exclusive)' }),
    meterIds: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,9}(,[1-9][0-9]{0,9}){0,999}$', description: 'comma-separated meter ids, e.g. 3,4,9' })),
    area: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'every meter of this area' })),
    resolution: Type.Optional(
      stringEnum(['15min', 'hour', 'day'] as const, { description: `15min (default; at most ${MAX_EXPORT_DAYS['15min']} days), hour or day` }),
    ),
    layout: Type.Optional(stringEnum(['wide', 'long'] as const, { description: 'wide (default): a column per meter; long: a row per meter and interval' })),
    format: Type.Optional(stringEnum(['csv', 'xlsx'] as const, { description: 'csv (default) or xlsx' })),
    locale: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 35,
        description: "CSV separators of this locale (de: ';' between fields, ',' decimal); default the site's locale",
      }),
    ),
    bom: Type.Optional(Type.Boolean({ description: 'CSV starts with a UTF-8 byte order mark (Excel then reads it as UTF-8); default false' })),
  },
  { additionalProperties: false },
);

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export type ExportRouteNeeds = { exports: EnergyExport; db: Db };

export function exportRoutes({ exports: exporter, db }: ExportRouteNeeds) {
  // The site's settings as site/ keeps them (one read per connection until platform_config is written).
  const site = siteSettings(db);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/exports/energy',
      access: 'viewer',
      summary: 'Intervals of many meters (a list, an area, or every meter of the site) over a period, as CSV or XLSX, streamed',
      description:
        'Give meterIds or area, or neither for every meter. Timestamps are the site time zone with their offset (start and end ' +
        'of each interval; a DST day has 92 or 100 quarter hours). An empty value: no data for that meter in that interval ' +
        '(an hour or day with any interval missing is empty, never a partial sum). 404 for an unknown meter or an area without ' +
        'meters; 400 for a range too long or an XLSX past the sheet row limit (long layout: use wide, a coarser resolution or CSV).',
      tags: ['energy'],
      raw: { contentType: 'text/csv; charset=utf-8', contentTypes: ['text/csv; charset=utf-8', XLSX_TYPE] },
      schemas: {
        query: ExportQuery,
        response: { 200: Type.String({ description: 'CSV (format=csv) or XLSX (format=xlsx)' }), 400: ErrorBody, 404: ErrorBody },
      },
      handler: ({ query, ctx }) => {
        const plan = exporter.plan({
          from: query.from,
          to: query.to,
          meterIds: query.meterIds?.split(',').map(Number),
          area: query.area,
          resolution: query.resolution ?? '15min',
          layout: query.layout ?? 'wide',
        });
        const name = `energy_${plan.resolution}_${plan.layout}_${plan.from}_${plan.to}`;
        ctx.status = 200;
        if (query.format === 'xlsx') {
          exporter.checkXlsx(plan);
          ctx.type = XLSX_TYPE;
          setAttachment(ctx, `${name}.xlsx`);
          const out = new PassThrough();
          let closed = false;
          ctx.req.once('close', () => (closed = true));
          exporter.xlsx(plan, out, () => closed).catch((error: unknown) => out.destroy(error as Error));
          ctx.body = out;
          return;
        }
        ctx.type = 'text/csv; charset=utf-8';
        setAttachment(ctx, `${name}.csv`);
        // Byte mode: at most one day's chunk waits in the stream, not sixteen.
        ctx.body = Readable.from(exporter.csvBytes(plan, { locale: query.locale ?? site().locale, bom: query.bom ?? false }), {
          objectMode: false,
        });
      },
    }),
  ];
}
