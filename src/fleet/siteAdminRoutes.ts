// The site administration routes' handlers (declared in routes.ts): each checks its body against its schema, acts on a
// site within the admin's list (siteAdmin.ts) and logs who did it.
import type Koa from 'koa';
import type pg from 'pg';
import type { Logger } from '../platform/logger.ts';
import { alertIdOf, requestAcknowledgement } from './alertAcks.ts';
import type { FleetUser } from './enrolment.ts';
import { FleetError } from './errors.ts';
import { chooseBoxAudited, decideSecondBox, readmitSite, renameSite, revokeSiteAudited, siteAuditPage } from './siteAdmin.ts';
import { validateRename, validateSecondBoxDecision } from './siteAdminSchemas.ts';
import { checked } from './peopleRoutes.ts';
import { firstError, validateSiteBox } from './schemas.ts';

type Handler = (ctx: Koa.Context, user: FleetUser | undefined) => Promise<void>;
export type SiteAdminNeeds = {
  pool: pg.Pool;
  logger: Logger;
  readBody: (ctx: Koa.Context) => Promise<unknown>;
  siteInScope: (user: FleetUser, id: string | undefined) => string;
  pageOf: (query: Record<string, unknown>) => { page: number; pageSize: number };
};

export function siteAdminHandlers(
  needs: SiteAdminNeeds,
): Record<
  | 'POST /api/fleet/sites/:id/revoke'
  | 'POST /api/fleet/sites/:id/readmit'
  | 'PATCH /api/fleet/sites/:id'
  | 'POST /api/fleet/sites/:id/box'
  | 'POST /api/fleet/sites/:id/second-box'
  | 'GET /api/fleet/sites/:id/audit'
  | 'POST /api/fleet/sites/:id/alerts/:alert/acknowledge',
  Handler
> {
  const { pool, logger } = needs;
  return {
    'POST /api/fleet/sites/:id/revoke': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      await revokeSiteAudited(pool, siteId, user!.name);
      logger.info({ siteId, by: user!.name }, 'site revoked');
      ctx.status = 204;
    },
    'POST /api/fleet/sites/:id/readmit': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      await readmitSite(pool, siteId, user!.name);
      logger.info({ siteId, by: user!.name }, 'site re-admitted');
      ctx.status = 204;
    },
    'PATCH /api/fleet/sites/:id': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      const body = checked(validateRename, await needs.readBody(ctx));
      await renameSite(pool, siteId, body.name, user!.name);
      ctx.status = 204;
    },
    // Which box is the site (after a second box's alarm): its install id; the other box's batches are refused from then on.
    'POST /api/fleet/sites/:id/box': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      const body = await needs.readBody(ctx);
      if (!validateSiteBox(body)) throw new FleetError('invalid_request', `refused: ${firstError(validateSiteBox)}`);
      await chooseBoxAudited(pool, siteId, body.installId, user!.name);
      logger.info({ siteId, installId: body.installId, by: user!.name }, 'site box chosen');
      ctx.status = 204;
    },
    'POST /api/fleet/sites/:id/second-box': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      const body = checked(validateSecondBoxDecision, await needs.readBody(ctx));
      await decideSecondBox(pool, siteId, body, user!.name);
      logger.info({ siteId, decision: body.decision, by: user!.name }, 'second box decided');
      ctx.status = 204;
    },
    'GET /api/fleet/sites/:id/audit': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      ctx.body = await siteAuditPage(pool, siteId, needs.pageOf(ctx.query));
    },
    // A site's alert acknowledged from the portfolio: on its way to the box (alertAcks.ts), answered 202.
    'POST /api/fleet/sites/:id/alerts/:alert/acknowledge': async (ctx, user) => {
      const siteId = needs.siteInScope(user!, ctx.params.id);
      const request = await requestAcknowledgement(pool, siteId, alertIdOf(ctx.params.alert), user!.name);
      logger.info({ siteId, alertId: request.alertId, by: user!.name }, 'alert acknowledged from the fleet');
      ctx.status = 202;
      ctx.body = request;
    },
  };
}
