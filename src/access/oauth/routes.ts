// SPEC.md "OAuth endpoints" plus the per-user link list and unlink (DESIGN.md "OAuth sign-in").
import type { OAuthService } from './service.ts';
import type { Context } from 'koa';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, Ok } from '../../platform/http/schemas.ts';
import { compileResponse } from '../../platform/http/validation.ts';
import { popupPage } from './popupPage.ts';
import {
  AuthorizeUrl,
  BindBody,
  CallbackOutcome,
  CallbackParams,
  LinkListQuery,
  LinkPage,
  ProviderList,
  ProviderParams,
  RegisterAndBindBody,
  SignedIn,
  UserLinkParams,
  UserProviderParams,
} from './schemas.ts';
import type { CallbackParams as CallbackInput } from './service.ts';

const tags = ['auth'];
const CALLBACK_PATH = '/api/auth/oauth/:provider/callback';
const CALLBACK_DESCRIPTION =
  'Answers JSON for a POST or `Accept: application/json`; otherwise a small HTML page that posts the same object to ' +
  "`window.opener` (posted to each origin listed in EMS_PORTAL_ORIGIN, of which the browser delivers only to the opener's own; " +
  'else to the service origin) and closes. 400 for a bad or replayed state, ' +
  '502 when the provider fails or its answer does not verify.';

const validateOutcome = compileResponse(CallbackOutcome);

export type OAuthRouteNeeds = { oauth: OAuthService };

export function oauthRoutes({ oauth }: OAuthRouteNeeds) {
  /** Streams its own answer (JSON or the popup page), so it checks the outcome against its schema itself. */
  const answerCallback = async (ctx: Context, provider: string, input: CallbackInput) => {
    const outcome = await oauth.callback(provider, input);
    const errors = validateOutcome(outcome);
    // A server fault, not the client's: the error renderer logs it at error with the route and answers 500 INTERNAL.
    if (errors) throw Object.assign(new Error('the OAuth callback outcome failed its response schema'), { details: errors });
    // Tokens are in this answer: no cache may keep it.
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 200;
    if (ctx.method === 'POST' || ctx.accepts('html', 'json') === 'json') {
      ctx.type = 'application/json';
      ctx.body = outcome;
      return;
    }
    const page = popupPage(outcome, oauth.popupTargetOrigins());
    ctx.set('Content-Security-Policy', page.contentSecurityPolicy);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page.html;
  };

  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/oauth/providers',
      access: 'public',
      summary: 'The configured sign-in providers',
      description: 'The providers configured on this appliance (none unless EMS_OAUTH_* is set), for the sign-in page to offer. Changes nothing.',
      tags,
      schemas: { response: { 200: ProviderList } },
      handler: () => ({ providers: oauth.list() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/oauth/:provider/authorize',
      access: 'public',
      summary: 'Begin a provider sign-in: the URL to open in the popup',
      description: 'The state (single use, 10 minutes, bound to this provider), PKCE verifier and nonce stay on the server.',
      tags,
      schemas: { params: ProviderParams, response: { 200: AuthorizeUrl, 404: ErrorBody, 502: ErrorBody } },
      handler: async ({ params, ctx }) => ({ url: await oauth.authorize(params.provider, ctx.ip) }),
    }),
    defineRoute({
      method: 'GET',
      path: CALLBACK_PATH,
      access: 'public',
      summary: 'Provider redirect target: exchange the code, then linked or bind_required',
      description: CALLBACK_DESCRIPTION,
      tags,
      raw: { contentType: 'text/html; charset=utf-8', contentTypes: ['text/html; charset=utf-8', 'application/json'] },
      schemas: { params: ProviderParams, query: CallbackParams, response: { 200: CallbackOutcome, 404: ErrorBody, 502: ErrorBody } },
      handler: ({ params, query, ctx }) => answerCallback(ctx, params.provider, query),
    }),
    defineRoute({
      method: 'POST',
      path: CALLBACK_PATH,
      access: 'public',
      summary: 'Provider callback as a form post (or JSON): always answers JSON',
      example: { code: 'SplxlOBeZQQYbYS6WxSbIA', state: 'af0ifjsldkj' },
      description: CALLBACK_DESCRIPTION,
      tags,
      bodyType: 'form',
      raw: { contentType: 'application/json' },
      schemas: { params: ProviderParams, body: CallbackParams, response: { 200: CallbackOutcome, 404: ErrorBody, 502: ErrorBody } },
      handler: ({ params, body, ctx }) => answerCallback(ctx, params.provider, body),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/oauth/bind',
      access: 'public',
      summary: 'Link the provider identity to an existing account (username or email, and password)',
      example: { bindToken: 'Kq3v0bS1nDt0kEn', username: 'jane.doe', password: 'correct-horse-42' },
      description: 'Counts as a sign-in attempt for throttling. The bind token is spent on success.',
      tags,
      schemas: { body: BindBody, response: { 200: SignedIn, 401: ErrorBody, 409: ErrorBody, 429: ErrorBody } },
      handler: ({ body, ctx }) => oauth.bind(body, ctx.ip),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/oauth/register-and-bind',
      access: 'public',
      summary: 'Create an account from the provider profile (default role) and link it',
      example: { bindToken: 'Kq3v0bS1nDt0kEn', username: 'jane.doe', email: 'jane@example.com' },
      description: 'username and email default to the provider profile. 409 when either is taken.',
      tags,
      schemas: { body: RegisterAndBindBody, response: { 201: SignedIn, 409: ErrorBody } },
      handler: async ({ body }) => new Reply(201, await oauth.registerAndBind(body)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/:id/oauth-links',
      access: 'viewer',
      summary: "A user's linked sign-in providers (self or admin)",
      description: "The providers linked to the user, with when each was linked. A user may read their own; admins anyone's (403 otherwise). Changes nothing.",
      tags: ['users'],
      schemas: { params: UserLinkParams, query: LinkListQuery, response: { 200: LinkPage, 403: ErrorBody, 404: ErrorBody } },
      handler: ({ params, query, user }) => oauth.listLinks(user, params.id, query.page, query.pageSize),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/users/:id/oauth-links/:provider',
      access: 'viewer',
      summary: 'Unlink a sign-in provider from a user (self or admin)',
      description:
        "Removes the link, so that provider identity no longer signs in as this user; the account and its password stay. A user may unlink their own; admins anyone's (403 otherwise). 404 when no such link exists.",
      tags: ['users'],
      schemas: { params: UserProviderParams, response: { 200: Ok, 403: ErrorBody, 404: ErrorBody } },
      handler: ({ params, user }) => {
        oauth.unlink(user, params.id, params.provider);
        return { ok: true as const };
      },
    }),
  ];
}
