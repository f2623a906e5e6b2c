// /api/iot/*: the gateway's own contract, relayed. Each route maps to one fixed gateway path; nothing from the client picks the path.
import type { IotGateway } from './service.ts';
import { type TSchema, Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { codeForStatus } from '../platform/errors.ts';
import { defineRoute } from '../platform/http/route.ts';
import { ErrorBody } from '../platform/http/schemas.ts';
import type { GatewayPath } from './client.ts';
import type { GatewayAnswer } from './service.ts';
import {
  AlarmConfigsAnswer,
  AlarmsAnswer,
  AlarmsQuery,
  GatewayTokenInfo,
  HistoryAnswer,
  HistoryBody,
  HistoryQuery,
  ValuesAnswer,
  ValuesBody,
  ValuesQuery,
  ForceWriteBody,
  WriteAnswer,
  WriteBody,
} from './schemas.ts';

const tags = ['iot'];
const RELAYED =
  "The gateway's status and JSON body are relayed unchanged (the 200 schema below is the gateway contract). " +
  'An upstream 401 renews the gateway token and retries once; a 401 after that is answered 502. Unreachable gateway: 502; no answer within EMS_IOT_TIMEOUT_MS: 504.';
/**
 * A relayed gateway refusal: the service's error shape, plus the gateway's own fields (see relayAnswer), so declared
 * open; `success: false` is the one a write refusal of the gateway contract carries.
 */
const RelayedError = Type.Object(
  {
    ...ErrorBody.properties,
    gatewayStatus: Type.Optional(Type.Integer({ description: "502 only: the gateway's own status" })),
    success: Type.Optional(Type.Boolean({ description: "a write refusal's field of the gateway contract, relayed" })),
  },
  { additionalProperties: true, description: "The gateway's other fields are relayed too, except a stack trace or the like." },
);
const failures = { 400: RelayedError, 404: RelayedError, 409: RelayedError, 502: RelayedError, 504: ErrorBody };
/** Gateway refusals whose meaning is the client's (bad value, no such point, state): relayed with their status. */
const CLIENT_REFUSALS = new Set([400, 404, 409]);
const json = { contentType: 'application/json' };

/** Fields of a gateway's error body that describe its internals; no answer of this service carries them. */
const INTERNALS = new Set(['stack', 'stacktrace', 'stackTrace', 'trace', 'exception']);

/**
 * A success is the gateway's answer byte for byte. A gateway error gets the service's error shape and a declared
 * status: 400 (also for 422), 404 and 409 keep their meaning; anything else (403, 429, 5xx, …) is 502 BAD_GATEWAY with
 * `gatewayStatus`. `error` is the gateway's own message; its other fields stay, except a stack trace or the like: no
 * response body of the service carries a stack.
 */
function relayAnswer(ctx: Context, answer: GatewayAnswer): void {
  if (answer.status < 400) {
    ctx.status = answer.status;
    if (answer.status === 204 || answer.status === 304) return;
    ctx.type = 'application/json';
    ctx.body = answer.raw;
    return;
  }
  const upstream = answer.status === 422 ? 400 : answer.status;
  const status = CLIENT_REFUSALS.has(upstream) ? upstream : 502;
  const body = answer.json !== null && typeof answer.json === 'object' && !Array.isArray(answer.json) ? (answer.json as Record<string, unknown>) : {};
  const kept = Object.fromEntries(Object.entries(body).filter(([key]) => !INTERNALS.has(key) && key !== 'code'));
  const said = typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : `the gateway answered ${answer.status}`;
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ ...kept, error: said.slice(0, 500), code: codeForStatus(status), ...(status === 502 ? { gatewayStatus: answer.status } : {}) });
}

/**
 * The query string sent upstream: only the fields the route's schema declares, as validated, never the client's raw
 * string (an unknown or over-long parameter would reach the gateway, which may answer 431 to it).
 */
function upstreamQuery(schema: TSchema | undefined, query: unknown): string {
  const declared = Object.keys((schema?.properties as Record<string, unknown> | undefined) ?? {});
  const values = (query ?? {}) as Record<string, unknown>;
  const out: string[] = [];
  for (const name of declared) {
    const value = values[name];
    if (value === undefined || value === null) continue;
    // ':' stays as it is (RFC 3986 allows it in a query): a time reads 2026-01-01T00:00:00Z upstream as it was sent.
    for (const item of Array.isArray(value) ? value : [value]) out.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(item)).replace(/%3A/g, ':')}`);
  }
  return out.join('&');
}

export type IotRouteNeeds = { iot: IotGateway };

export function iotRoutes({ iot }: IotRouteNeeds) {
  const reads: Array<{ method: 'GET' | 'POST'; path: GatewayPath; summary: string; query?: TSchema; body?: TSchema; answer: TSchema; example?: unknown }> = [
    {
      method: 'GET',
      path: '/codes/values',
      summary: 'Current values of points (codes in the query; request line and headers must stay under 16 KiB, else 431: use POST for many codes)',
      query: ValuesQuery,
      answer: ValuesAnswer,
    },
    {
      method: 'POST',
      path: '/codes/values',
      summary: 'Current values of points',
      body: ValuesBody,
      answer: ValuesAnswer,
      example: { codes: ['meter.main.kwh', 'temp.outdoor'] },
    },
    { method: 'GET', path: '/codes/history', summary: 'History of one point between start and end (query)', query: HistoryQuery, answer: HistoryAnswer },
    {
      method: 'POST',
      path: '/codes/history',
      summary: 'History of one point between start and end',
      body: HistoryBody,
      answer: HistoryAnswer,
      example: { code: 'meter.main.kwh', start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' },
    },
    { method: 'GET', path: '/alarms', summary: 'Alarm history, newest first', query: AlarmsQuery, answer: AlarmsAnswer },
    { method: 'GET', path: '/alarm-configs', summary: 'Alarm configuration', answer: AlarmConfigsAnswer },
  ];
  const writes: Array<{
    path: '/codes/set' | '/codes/force-set';
    access: 'operator' | 'admin';
    summary: string;
    body: typeof WriteBody | typeof ForceWriteBody;
    example: unknown;
  }> = [
    {
      path: '/codes/set',
      access: 'operator',
      summary: 'Write a point value (setpoints and commands, within range)',
      body: WriteBody,
      example: { code: 'sp.zone1', value: 21.5 },
    },
    { path: '/codes/force-set', access: 'admin', summary: 'Override any point value', body: ForceWriteBody, example: { code: 'temp.zone1', value: 35 } },
  ];

  return [
    defineRoute({
      method: 'GET',
      path: '/api/iot/token',
      access: 'admin',
      summary: 'The cached gateway access token and its expiry',
      description: 'Fetches a new token first when none is stored or the stored one is about to expire.',
      tags,
      schemas: { response: { 200: GatewayTokenInfo, ...failures } },
      handler: () => iot.token(),
    }),
    ...reads.map((read) =>
      defineRoute({
        method: read.method,
        path: `/api/iot${read.path}`,
        access: 'viewer',
        summary: read.summary,
        description: RELAYED,
        example: read.example,
        tags,
        raw: json,
        ...(read.method === 'POST' ? { readOnly: true as const } : {}),
        schemas: { ...(read.query ? { query: read.query } : {}), ...(read.body ? { body: read.body } : {}), response: { 200: read.answer, ...failures } },
        handler: async ({ body, query, ctx }) => {
          // Codes go upstream in a POST body (the contract allows both): in a query string ~130 long codes pass a gateway's
          // header limit (16 KiB on a Node-based one such as the simulator) and it answers 431.
          const answer =
            read.path === '/codes/values' && read.method === 'GET'
              ? await iot.relay('POST', '/codes/values', {
                  body: { codes: (query as unknown as { codes: string[] }).codes.flatMap((code) => code.split(',')).filter(Boolean) },
                })
              : await iot.relay(read.method, read.path, read.body ? { body } : { query: upstreamQuery(read.query, query) });
          relayAnswer(ctx, answer);
        },
      }),
    ),
    ...writes.map((write) =>
      defineRoute({
        method: 'POST',
        path: `/api/iot${write.path}`,
        access: write.access,
        summary: write.summary,
        description: `${RELAYED} Sent once (again only after a token renewal); logged and audited with the gateway's answer.`,
        example: write.example,
        tags,
        raw: json,
        schemas: { body: write.body, response: { 200: WriteAnswer, ...failures } },
        handler: async ({ body, user, ctx }) => {
          const answer = await iot.write(write.path === '/codes/set' ? 'set' : 'force-set', user, body);
          relayAnswer(ctx, answer);
        },
      }),
    ),
  ];
}
