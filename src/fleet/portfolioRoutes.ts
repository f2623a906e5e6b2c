// The portfolio routes' handlers (declared in routes.ts): the sites' health, a site's meters, the EUI ranking, the
// alerts and who is signed in, each within the caller's sites and read from the replica where one is configured, and
// the same views as XLSX workbooks (export.ts).
import type Koa from 'koa';
import type pg from 'pg';
import { withAckState } from './alertAcks.ts';
import type { FleetUser } from './enrolment.ts';
import { ALERT_EXPORT_LIMIT, workbookOffThread, XLSX_TYPE } from './export.ts';
import type { listQuery } from './listQuery.ts';
import { alertList, byGrade, euiPage, euiRanking, siteHealth, siteHealthPage, siteMeters } from './portfolio.ts';

type Handler = (ctx: Koa.Context, user: FleetUser | undefined) => Promise<void>;
export type PortfolioNeeds = {
  /** The primary: alert acknowledgements are read where they are written. */
  pool: pg.Pool;
  /** The replica, or the primary when none is configured. */
  readPool: pg.Pool;
  /** The primary's clock (the tests' clock where they set one). */
  now: () => Promise<number>;
  /** The wall clock that dates an export's file name (the tests' clock where they set one). */
  fileDate: () => number;
  siteInScope: (user: FleetUser, id: string | undefined) => string;
  /** The paged lists' query, read and checked (src/fleet/listQuery.ts). */
  listQuery: typeof listQuery;
};

export function portfolioHandlers(
  needs: PortfolioNeeds,
): Record<
  | 'GET /api/fleet/sites'
  | 'GET /api/fleet/sites/:id/meters'
  | 'GET /api/fleet/eui'
  | 'GET /api/fleet/alerts'
  | 'GET /api/fleet/me'
  | 'GET /api/fleet/sites.xlsx'
  | 'GET /api/fleet/eui.xlsx'
  | 'GET /api/fleet/alerts.xlsx',
  Handler
> {
  const { pool, readPool, now, siteInScope, listQuery } = needs;
  // The portfolio views as XLSX: the same rows the JSON routes answer (src/fleet/export.ts).
  const xlsx = (ctx: Koa.Context, name: string, body: Buffer) => {
    ctx.type = XLSX_TYPE;
    ctx.set('Content-Disposition', `attachment; filename="${name}-${new Date(needs.fileDate()).toISOString().slice(0, 10)}.xlsx"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };
  return {
    'GET /api/fleet/sites': async (ctx, user) => {
      ctx.body = await siteHealthPage(readPool, user!.sites, listQuery(ctx.query, ['site'], 100), await now());
    },
    'GET /api/fleet/sites/:id/meters': async (ctx, user) => {
      const siteId = siteInScope(user!, ctx.params.id);
      ctx.body = { items: await siteMeters(readPool, user!.sites, siteId, await now()) };
    },
    'GET /api/fleet/eui': async (ctx, user) => {
      ctx.body = await euiPage(readPool, user!.sites, listQuery(ctx.query, [], 100), await now());
    },
    'GET /api/fleet/alerts': async (ctx, user) => {
      ctx.body = await withAckState(pool, await alertList(readPool, user!.sites, listQuery(ctx.query, ['status'])));
    },
    // Who is signed in (the staff app in fleet mode asks once at sign-in): name, role, the sites they are limited to.
    'GET /api/fleet/me': async (ctx, user) => {
      ctx.body = { name: user!.name, role: user!.role, sites: user!.sites };
    },
    'GET /api/fleet/sites.xlsx': async (ctx, user) => {
      xlsx(ctx, 'fleet-health', await workbookOffThread({ kind: 'health', rows: byGrade(await siteHealth(readPool, user!.sites, await now())) }));
    },
    'GET /api/fleet/eui.xlsx': async (ctx, user) => {
      xlsx(ctx, 'fleet-eui', await workbookOffThread({ kind: 'eui', rows: await euiRanking(readPool, user!.sites, await now()) }));
    },
    'GET /api/fleet/alerts.xlsx': async (ctx, user) => {
      const { includeResolved } = listQuery(ctx.query, ['status']);
      const list = await alertList(readPool, user!.sites, { page: 1, pageSize: ALERT_EXPORT_LIMIT, includeResolved });
      xlsx(ctx, 'fleet-alerts', await workbookOffThread({ kind: 'alerts', rows: list.items, total: list.total }));
    },
  };
}
