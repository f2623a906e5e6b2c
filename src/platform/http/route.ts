// One route definition: method, path, access, schemas, summary and handler. Router, allow-list, role checks and OpenAPI all come from it.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { Role } from '../roles.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** 'public', or the lowest role allowed. */
export type Access = 'public' | Role;

export type AuthUser = { id: number; username: string; email: string; role: Role };

export type RouteSchemas = {
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /** One schema per status the route answers with; the lowest 2xx is the default success status. */
  response: Record<number, TSchema>;
};

type In<S, K extends keyof RouteSchemas> = S extends Record<K, infer T extends TSchema> ? Static<T> : Record<string, never>;

export type RequestOf<S extends RouteSchemas, A extends Access> = {
  params: In<S, 'params'>;
  query: In<S, 'query'>;
  body: In<S, 'body'>;
  user: A extends 'public' ? AuthUser | null : AuthUser;
  requestId: string;
  /** Escape hatch for streaming routes (uploads, downloads, HTML pages); services never see it. */
  ctx: Context;
};

/** Returned by a handler to pick a status other than the default success one. */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
    readonly headers: Record<string, string> = {},
  ) {}
}

export type RouteDefinition<S extends RouteSchemas, A extends Access> = {
  method: Method;
  path: string;
  access: A;
  summary: string;
  description?: string;
  tags: string[];
  schemas: S;
  /**
   * 'json' (default when a body schema is given), 'form' (also accepts urlencoded, for provider callbacks),
   * 'multipart' (the handler streams the request itself) or 'none'.
   */
  bodyType?: 'json' | 'form' | 'multipart';
  /** A body the handler streams itself as it is (no schema, no parser), e.g. a CSV; the document shows its type and the example. */
  rawBody?: { contentType: string };
  /**
   * The handler writes ctx.body itself (streams, HTML); no response validation. `contentTypes` lists every type the
   * success answer can carry when there are several (the document declares them all); `storedFile`: sent by
   * sendStoredFile, so the document also declares 206 (one Range), 304 (If-None-Match) and 416.
   */
  raw?: { contentType: string; contentTypes?: readonly string[]; storedFile?: true };
  /** A valid JSON request body, shown in the reference; test/platform/apiReference.test.ts validates it against schemas.body. */
  example?: unknown;
  /**
   * A success answer as the service gives it (plausible example data), published as the success schema's `examples`;
   * test/platform/responseExamples.test.ts checks it against that schema with the server's own response validator.
   */
  responseExample?: unknown;
  /**
   * The handler hands back the very same object for as long as its content is unchanged (a cached payload, never
   * mutated in place): while it does, the JSON text validated for it is sent again without validating or
   * serialising it anew — for every such object still held (a kept page per filter), not only the last one. A new
   * object is validated as usual.
   */
  reusesBody?: true;
  /** A POST that changes nothing (a query sent as a body): its 5xx answers are not logged as failed writes. */
  readOnly?: true;
  handler: (request: RequestOf<S, A>) => unknown | Promise<unknown>;
};

export type AnyRoute = RouteDefinition<RouteSchemas, Access>;

/**
 * A context's route tables, each under the key the composition root publishes it by: the router and the OpenAPI
 * document list the tables in the order of that list (ROUTE_ORDER in src/app/routes.ts), whatever order the contexts
 * are built in.
 */
export type RouteGroups = Record<string, AnyRoute[]>;

export function defineRoute<S extends RouteSchemas, A extends Access>(definition: RouteDefinition<S, A>): AnyRoute {
  return definition as unknown as AnyRoute;
}

export function successStatus(route: AnyRoute): number {
  const codes = Object.keys(route.schemas.response)
    .map(Number)
    .filter((code) => code >= 200 && code < 300)
    .sort((a, b) => a - b);
  return codes[0] ?? 200;
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export function roleAtLeast(role: Role, minimum: Role): boolean {
  return RANK[role] >= RANK[minimum];
}
