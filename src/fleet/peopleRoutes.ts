// The handlers of the sign-in and user routes (declared in routes.ts): password sign-in and invitations (people.ts),
// single sign-on (sso.ts), the users and their roles per site for an admin of every site.
import type Koa from 'koa';
import type pg from 'pg';
import type { Logger } from '../platform/logger.ts';
import { bearer } from './credentials.ts';
import type { FleetUser } from './enrolment.ts';
import { FleetError } from './errors.ts';
import { acceptInvitation, endSession, invite, listPeople, signInWithPassword, updatePerson } from './people.ts';
import { validateAcceptInvitation, validateInvite, validateSignIn, validateUpdatePerson } from './peopleSchemas.ts';
import { firstError } from './schemas.ts';
import type { FleetSso } from './sso.ts';

type Handler = (ctx: Koa.Context, user: FleetUser | undefined) => Promise<void>;
export type PeopleNeeds = { pool: pg.Pool; logger: Logger; sso: FleetSso | null; readBody: (ctx: Koa.Context) => Promise<unknown> };

/** A body checked against its schema: a 400 naming the first field that fails. */
export function checked<T>(validate: ((body: unknown) => body is T) & { errors?: unknown }, body: unknown): T {
  if (!validate(body)) {
    const error = (validate.errors as Array<{ instancePath: string }> | null)?.[0];
    throw new FleetError('invalid_request', `refused: ${firstError(validate as never)}`, { details: { field: error?.instancePath || '/' } });
  }
  return body;
}

/** A 302 with a line of text (the document declares text/plain), never the session in the body. */
function redirect(ctx: Koa.Context, url: string): void {
  ctx.status = 302;
  ctx.set('Location', url);
  ctx.type = 'text/plain';
  ctx.body = 'Redirecting.';
}

function personId(ctx: Koa.Context): number {
  const id = String(ctx.params.id ?? '');
  if (!/^[1-9][0-9]{0,14}$/.test(id)) throw new FleetError('not_found', 'no such fleet user');
  return Number(id);
}

export function peopleHandlers(
  needs: PeopleNeeds,
): Record<
  | 'GET /api/fleet/auth/options'
  | 'POST /api/fleet/auth/sign-in'
  | 'POST /api/fleet/auth/sign-out'
  | 'POST /api/fleet/auth/accept'
  | 'GET /api/fleet/auth/sso'
  | 'GET /api/fleet/auth/sso/callback'
  | 'GET /api/fleet/users'
  | 'POST /api/fleet/users'
  | 'PATCH /api/fleet/users/:id',
  Handler
> {
  const { pool, logger, sso } = needs;
  return {
    'GET /api/fleet/auth/options': async (ctx) => {
      ctx.body = { password: true, sso: sso ? { name: sso.displayName } : null };
    },
    'POST /api/fleet/auth/sign-in': async (ctx) => {
      const body = checked(validateSignIn, await needs.readBody(ctx));
      try {
        ctx.body = await signInWithPassword(pool, body.name, body.password, ctx.ip);
      } catch (error) {
        if (error instanceof FleetError) logger.warn({ login: body.name, ip: ctx.ip, code: error.code }, 'fleet sign-in refused');
        throw error;
      }
      ctx.status = 201;
      logger.info({ login: body.name }, 'fleet user signed in');
    },
    'POST /api/fleet/auth/sign-out': async (ctx) => {
      await endSession(pool, bearer(ctx.get('authorization')));
      ctx.status = 204;
    },
    'POST /api/fleet/auth/accept': async (ctx) => {
      const body = checked(validateAcceptInvitation, await needs.readBody(ctx));
      ctx.body = await acceptInvitation(pool, body.invitation, body.password);
      ctx.status = 201;
    },
    'GET /api/fleet/auth/sso': async (ctx) => {
      if (!sso) throw new FleetError('sso_off', 'single sign-on is not set up at this fleet (EMS_FLEET_OIDC_ISSUER)');
      try {
        redirect(ctx, await sso.start());
      } catch (error) {
        if (error instanceof FleetError) throw error;
        logger.warn({ reason: (error as Error).message }, 'fleet single sign-on could not start');
        throw new FleetError('sso_unreachable', 'the sign-in provider could not be reached; try again later');
      }
    },
    // The issuer sends the browser back here: on to the app with the session in the fragment (never sent to a server,
    // nor in a Referer), or with the reason there is none.
    'GET /api/fleet/auth/sso/callback': async (ctx) => {
      const outcome = sso ? await sso.finish(ctx.query) : { error: 'sso_failed' as const };
      redirect(ctx, 'token' in outcome ? `/#session=${encodeURIComponent(outcome.token)}` : `/#sso-error=${outcome.error}`);
    },
    'GET /api/fleet/users': async (ctx) => {
      ctx.body = { items: await listPeople(pool) };
    },
    'POST /api/fleet/users': async (ctx, user) => {
      const body = checked(validateInvite, await needs.readBody(ctx));
      ctx.body = await invite(pool, body);
      ctx.status = 201;
      logger.info({ name: body.name, role: body.role, by: user!.name }, 'fleet user invited');
    },
    'PATCH /api/fleet/users/:id': async (ctx, user) => {
      const id = personId(ctx);
      const body = checked(validateUpdatePerson, await needs.readBody(ctx));
      await updatePerson(pool, id, body);
      logger.info({ id, role: body.role, sites: body.sites, by: user!.name }, 'fleet user changed');
      ctx.status = 204;
    },
  };
}
