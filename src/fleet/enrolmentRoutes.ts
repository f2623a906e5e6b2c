// The enrolment routes' handlers (declared in routes.ts): a site joins with a one-time code and leaves with its
// credential; an admin of every site makes the codes (enrolment.ts).
import type Koa from 'koa';
import type pg from 'pg';
import type { Logger } from '../platform/logger.ts';
import { bearer } from './credentials.ts';
import { createEnrolmentCode, enrol, type FleetUser, leave, siteForCredential } from './enrolment.ts';
import { FleetError } from './errors.ts';
import { firstError, validateEnrol, validateEnrolmentCodeRequest } from './schemas.ts';

type Handler = (ctx: Koa.Context, user: FleetUser | undefined) => Promise<void>;
export type EnrolmentNeeds = { pool: pg.Pool; logger: Logger; readBody: (ctx: Koa.Context) => Promise<unknown> };

export function enrolmentHandlers({
  pool,
  logger,
  readBody,
}: EnrolmentNeeds): Record<'POST /api/fleet/enrol' | 'POST /api/fleet/leave' | 'POST /api/fleet/enrolment-codes', Handler> {
  return {
    'POST /api/fleet/enrol': async (ctx) => {
      const body = await readBody(ctx);
      if (!validateEnrol(body)) throw new FleetError('invalid_request', `enrolment refused: ${firstError(validateEnrol)}`);
      const result = await enrol(pool, body.code);
      logger.info({ siteId: result.siteId, site: result.siteName }, 'site enrolled');
      ctx.status = 201;
      ctx.body = result;
    },
    'POST /api/fleet/leave': async (ctx) => {
      const siteId = await siteForCredential(pool, bearer(ctx.get('authorization')));
      await leave(pool, siteId);
      logger.info({ siteId }, 'site left the fleet');
      ctx.status = 204;
    },
    'POST /api/fleet/enrolment-codes': async (ctx) => {
      const body = await readBody(ctx);
      if (!validateEnrolmentCodeRequest(body)) throw new FleetError('invalid_request', firstError(validateEnrolmentCodeRequest));
      ctx.status = 201;
      ctx.body = await createEnrolmentCode(pool, body.siteName, body.validHours);
    },
  };
}
