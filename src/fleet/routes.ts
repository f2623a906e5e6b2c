// The fleet's route table: method, path, who may call it, what it takes and answers (src/fleet/routeSchemas.ts), its
// summary. createFleetApp (app.ts) serves exactly these, the OpenAPI document at /documentation is built from them
// (openapi.ts), the role test (test/fleet/security.test.ts) calls each as every caller, and the contract fuzzer
// (test/fuzz/fleetFuzzer.ts) walks them. The handlers live beside the app (app.ts, siteAdmin.ts), keyed the same way.
import type { TSchema } from '@sinclair/typebox';
import * as S from './routeSchemas.ts';
import { BatchSchema, EnrolmentCodeRequestSchema, EnrolSchema, SiteBoxSchema } from './schemas.ts';
import * as P from './peopleSchemas.ts';
import { RenameSiteSchema, SecondBoxDecisionSchema, SiteAuditPageSchema } from './siteAdminSchemas.ts';

/** Who may call a route: public, a site (its credential), a fleet user (viewer or admin, within their sites), an admin of every site. */
export type FleetAccess = 'public' | 'site' | 'viewer' | 'admin' | 'fleet-admin';

export type FleetRouteDeclaration = {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  access: FleetAccess;
  summary: string;
  tag: 'service' | 'sites' | 'portfolio' | 'site administration' | 'people';
  schemas: { params?: TSchema; query?: TSchema; body?: TSchema; response: Record<number, TSchema> };
  /** Answers a file (XLSX) rather than JSON. */
  raw?: { contentType: string };
  /** Refusals of this route beyond those its access, path and body give (openapi.ts derives those). */
  refusals?: number[];
};

const XLSX = { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };
const NONE = undefined as unknown as TSchema;
const site = S.SiteParamsSchema;

const declared = {
  'GET /api/fleet/health': {
    access: 'public',
    tag: 'service',
    summary: 'The service and its database answer.',
    schemas: { response: { 200: S.ServiceHealthSchema } },
  },
  'POST /api/fleet/enrol': {
    access: 'public',
    tag: 'sites',
    summary: 'A box exchanges a one-time enrolment code for its site credential (once).',
    schemas: { body: EnrolSchema, response: { 201: S.EnrolledSchema } },
  },
  'POST /api/fleet/ingest': {
    access: 'site',
    tag: 'sites',
    summary: 'A box\'s batch of rows above its cursor: stored whole or refused whole (docs/fleet.md, "The fleet\'s rules").',
    schemas: { body: BatchSchema, response: { 200: S.AcknowledgementSchema } },
    refusals: [409, 422, 429],
  },
  'POST /api/fleet/leave': { access: 'site', tag: 'sites', summary: 'A box leaves: its credential is revoked.', schemas: { response: { 204: NONE } } },
  'POST /api/fleet/enrolment-codes': {
    access: 'fleet-admin',
    tag: 'site administration',
    summary: 'A one-time enrolment code for a new site (an admin of every site).',
    schemas: { body: EnrolmentCodeRequestSchema, response: { 201: S.EnrolmentCodeSchema } },
  },
  'POST /api/fleet/sites/:id/revoke': {
    access: 'admin',
    tag: 'site administration',
    summary: "Revokes the site's credential: its batches are refused from then on; what it stored stays.",
    schemas: { params: site, response: { 204: NONE } },
  },
  'POST /api/fleet/sites/:id/readmit': {
    access: 'admin',
    tag: 'site administration',
    summary: "Admits a revoked site again: its box's credential is taken again (a box that left has forgotten it and joins with a new code instead).",
    schemas: { params: site, response: { 204: NONE } },
  },
  'PATCH /api/fleet/sites/:id': {
    access: 'admin',
    tag: 'site administration',
    summary: "Renames the site at the fleet (the box's own name is kept beside it).",
    schemas: { params: site, body: RenameSiteSchema, response: { 204: NONE } },
  },
  'POST /api/fleet/sites/:id/box': {
    access: 'admin',
    tag: 'site administration',
    summary: "Says which box is the site (its install id): the other box's batches are refused from then on.",
    schemas: { params: site, body: SiteBoxSchema, response: { 204: NONE } },
  },
  'POST /api/fleet/sites/:id/second-box': {
    access: 'admin',
    tag: 'site administration',
    summary:
      "Decides a second box's quarantine, with the reason audited: `release` makes that box the site's box (its rows are taken from then on), `discard` keeps the site's box and clears the alarm (the other box stays refused).",
    schemas: { params: site, body: SecondBoxDecisionSchema, response: { 204: NONE } },
    refusals: [409],
  },
  'GET /api/fleet/sites/:id/audit': {
    access: 'admin',
    tag: 'site administration',
    summary: 'What was done to the site by whom, newest first, with the reasons given (a page at a time).',
    schemas: { params: site, query: S.PageQuerySchema, response: { 200: SiteAuditPageSchema } },
  },
  'GET /api/fleet/auth/options': {
    access: 'public',
    tag: 'people',
    summary: 'How people sign in here: a password always, single sign-on when an OIDC issuer is set up (its name).',
    schemas: { response: { 200: P.SignInOptionsSchema } },
  },
  'POST /api/fleet/auth/sign-in': {
    access: 'public',
    tag: 'people',
    summary:
      "A name (or email) and password: a session token for 12 hours. The box's lockout rules: 10 failures an account, 100 an address in 15 minutes, then 429.",
    schemas: { body: P.SignInSchema, response: { 201: P.SessionSchema } },
    refusals: [401, 429],
  },
  'POST /api/fleet/auth/sign-out': { access: 'viewer', tag: 'people', summary: 'Ends the session the request carries.', schemas: { response: { 204: NONE } } },
  'POST /api/fleet/auth/accept': {
    access: 'public',
    tag: 'people',
    summary: 'The invited person sets their password with the invitation (once, within 7 days) and is signed in.',
    schemas: { body: P.AcceptInvitationSchema, response: { 201: P.SessionSchema } },
  },
  'GET /api/fleet/auth/sso': {
    access: 'public',
    tag: 'people',
    summary: "Single sign-on: a redirect to the organisation's OIDC issuer (404 when none is set up).",
    schemas: { response: { 302: NONE } },
    refusals: [404, 502],
  },
  'GET /api/fleet/auth/sso/callback': {
    access: 'public',
    tag: 'people',
    summary: 'Where the issuer sends the browser back: on to the app with a session (`/#session=…`) or the reason there is none (`/#sso-error=…`).',
    schemas: { response: { 302: NONE } },
  },
  'GET /api/fleet/users': {
    access: 'fleet-admin',
    tag: 'people',
    summary: 'The fleet users: role, the sites they are limited to, how they sign in, an open invitation.',
    schemas: { response: { 200: P.PeopleSchema } },
  },
  'POST /api/fleet/users': {
    access: 'fleet-admin',
    tag: 'people',
    summary: 'Invites a person (a role, the sites they are limited to): the invitation is given once and lasts 7 days.',
    schemas: { body: P.InviteSchema, response: { 201: P.InvitationSchema } },
  },
  'PATCH /api/fleet/users/:id': {
    access: 'fleet-admin',
    tag: 'people',
    summary: "A user's role and sites. The fleet keeps at least one admin of every site (409 `last_admin`).",
    schemas: { params: P.PersonParamsSchema, body: P.UpdatePersonSchema, response: { 204: NONE } },
    refusals: [409],
  },
  'GET /api/fleet/sites': {
    access: 'viewer',
    tag: 'portfolio',
    summary: 'A page of the health list, ranked on the server (stale first), with the whole list’s counts.',
    schemas: { query: S.HealthQuerySchema, response: { 200: S.HealthPageSchema } },
  },
  'GET /api/fleet/sites/:id/meters': {
    access: 'viewer',
    tag: 'portfolio',
    summary: "A site's meters with their last 30 days.",
    schemas: { params: site, response: { 200: S.MetersSchema } },
  },
  'GET /api/fleet/eui': {
    access: 'viewer',
    tag: 'portfolio',
    summary: 'A page of the EUI ranking (kWh/m²·a over the last 12 complete months).',
    schemas: { query: S.PageQuerySchema, response: { 200: S.EuiPageSchema } },
  },
  'GET /api/fleet/alerts': {
    access: 'viewer',
    tag: 'portfolio',
    summary: "A page of the alerts of every site and the fleet's own alarms, newest first.",
    schemas: { query: S.AlertQuerySchema, response: { 200: S.AlertPageSchema } },
  },
  'POST /api/fleet/sites/:id/alerts/:alert/acknowledge': {
    access: 'admin',
    tag: 'portfolio',
    summary:
      "Acknowledges a site's active alert from the fleet, audited: the request goes to the site's box in the answer to its next batch, the box acknowledges the alert (naming who asked) and its following batch shows it acknowledged. 409 when the alert is not active.",
    schemas: { params: S.SiteAlertParamsSchema, response: { 202: S.AckRequestSchema } },
    refusals: [409],
  },
  'GET /api/fleet/me': { access: 'viewer', tag: 'portfolio', summary: 'The signed-in fleet user.', schemas: { response: { 200: S.FleetMeSchema } } },
  'GET /api/fleet/sites.xlsx': {
    access: 'viewer',
    tag: 'portfolio',
    summary: 'The health list as an XLSX workbook.',
    schemas: { response: { 200: NONE } },
    raw: XLSX,
  },
  'GET /api/fleet/eui.xlsx': {
    access: 'viewer',
    tag: 'portfolio',
    summary: 'The EUI ranking as an XLSX workbook.',
    schemas: { response: { 200: NONE } },
    raw: XLSX,
  },
  'GET /api/fleet/alerts.xlsx': {
    access: 'viewer',
    tag: 'portfolio',
    summary: 'The alert list as an XLSX workbook (at most 10,000 alerts and a note).',
    schemas: { query: S.AlertQuerySchema, response: { 200: NONE } },
    raw: XLSX,
  },
} satisfies Record<string, Omit<FleetRouteDeclaration, 'method' | 'path'>>;

export type FleetRouteKey = keyof typeof declared;
export type FleetRoute = FleetRouteDeclaration & { key: FleetRouteKey };

/** The fleet's routes and who may call each; createFleetApp serves exactly these. */
export const FLEET_ROUTES: ReadonlyArray<FleetRoute> = Object.entries(declared).map(([key, route]) => {
  const [method, path] = key.split(' ') as [FleetRouteDeclaration['method'], string];
  return { ...(route as Omit<FleetRouteDeclaration, 'method' | 'path'>), method, path, key: key as FleetRouteKey };
});
