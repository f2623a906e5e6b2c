// The API's answers as the generated schema (schema.d.ts, `npm run web:api`) has them: screens import these instead of
// declaring an answer's shape themselves, so a renamed field fails `typecheck` in every screen that reads it
// (test/structure/screenTypes.test.ts keeps API shapes out of screens/).
import type { components, paths } from './schema';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Success<R> = R extends { 200: infer A } ? Json<A> : R extends { 201: infer A } ? Json<A> : never;

/** The JSON body of a call's success (200, else 201): `Answer<'/api/alerts'>`, `Answer<'/api/reports/plans/{id}/run', 'post'>`. */
export type Answer<P extends keyof paths, M extends Method = 'get'> = paths[P][M] extends { responses: infer R } ? Success<R> : never;

type Sent<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON body a call sends: `Body<'/api/meters/{id}', 'put'>`. */
export type Body<P extends keyof paths, M extends Method> = Sent<paths[P][M]>;

/** An alert of the work-list (GET /api/alerts). */
export type Alert = Answer<'/api/alerts'>['items'][number];
/** A finding of the anomaly check (POST /api/analysis/anomalies/check). */
export type Finding = Answer<'/api/analysis/anomalies/check', 'post'>['findings'][number];
/** A sign-in provider (GET /api/auth/oauth/providers). */
export type Provider = Answer<'/api/auth/oauth/providers'>['providers'][number];
/** A report's run (GET /api/reports/plans/{id}/runs). */
export type ReportRun = Answer<'/api/reports/plans/{id}/runs'>['items'][number];
/** A report template as /api/reports/templates lists it. */
export type ReportTemplate = Answer<'/api/reports/templates'>['items'][number];
/** A meter of the meter list (GET /api/meters). */
export type Meter = Answer<'/api/meters'>['items'][number];
/** The person signed in (GET /api/auth/me). */
export type User = Answer<'/api/auth/me'>;
/** A refusal's body (400, 409, 413, …): its sentence, its stable code and the fields or lines it names. */
export type ApiError = components['schemas']['Error'];
/**
 * What the provider's popup posts to the window that opened it (src/access/oauth/popupPage.ts posts the callback's
 * outcome, the answer of GET /api/auth/oauth/{provider}/callback): signed in, or an account to bind.
 */
export type PopupOutcome = Answer<'/api/auth/oauth/{provider}/callback'>;
