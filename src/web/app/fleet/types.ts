// The fleet API's answers as the portfolio screens read them: taken from the types generated from the fleet's own
// OpenAPI document (api.d.ts, `npm run web:api`; src/fleet/routeSchemas.ts declares them), never kept by hand.
import type { operations } from './api';

type Ok<K extends keyof operations> = operations[K]['responses'] extends { 200: { content: { 'application/json': infer T } } } ? T : never;
type Created<K extends keyof operations> = operations[K]['responses'] extends { 201: { content: { 'application/json': infer T } } } ? T : never;

/** GET /api/fleet/sites: a page of the health list (stale first), the whole list's size and grade counts. */
export type HealthPage = Ok<'getApiFleetSites'>;
export type SiteHealth = HealthPage['items'][number];
export type HealthGrade = SiteHealth['grade'];
export type HealthReason = SiteHealth['reasons'][number];
/** GET /api/fleet/eui: a page of the ranking, the whole list's size and its highest EUI. */
export type EuiPage = Ok<'getApiFleetEui'>;
export type EuiRow = EuiPage['items'][number];
export type AlertPage = Ok<'getApiFleetAlerts'>;
export type FleetAlert = AlertPage['items'][number];
/** GET /api/fleet/sites/{id}/meters: a site's meters. */
export type MeterPage = Ok<'getApiFleetSitesIdMeters'>;
export type FleetMeter = MeterPage['items'][number];
export type FleetUser = Ok<'getApiFleetMe'>;
export type SiteAuditPage = Ok<'getApiFleetSitesIdAudit'>;
export type People = Ok<'getApiFleetUsers'>;
/** GET /api/fleet/auth/options: the ways to sign in this fleet offers. */
export type SignInOptions = Ok<'getApiFleetAuthOptions'>;
/** A session from a password sign-in (POST /api/fleet/auth/sign-in) or an accepted invitation (…/accept, the same shape). */
export type FleetSession = Created<'postApiFleetAuthSignIn'> & Created<'postApiFleetAuthAccept'>;
/** A new site's enrolment code (POST /api/fleet/enrolment-codes). */
export type EnrolmentCode = Created<'postApiFleetEnrolmentCodes'>;
/** A new person's invitation (POST /api/fleet/users), given once. */
export type Invitation = Created<'postApiFleetUsers'>;
