// /api/iot/*: the gateway's own contract, relayed. Each route maps to one fixed gateway path; nothing from the client picks the path.
import type { TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { AppDeps } from '../appDeps.ts';
import { defineRoute } from '../http/route.ts';
import { ErrorBody } from '../http/schemas.ts';
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
const failures = { 400: ErrorBody, 502: ErrorBody, 504: ErrorBody };
const json = { contentType: 'application/json' };

/** Fields of a gateway's error body that describe its internals; no answer of this service carries them. */
const INTERNALS = new Set(['stack', 'stacktrace', 'stackTrace', 'trace', 'exception']);

/**
 * The gateway's answer, byte for byte, with its status — except an error body with a stack trace (or the like),
 * which is relayed without those fields: no response body of the service carries a stack.
 */
function relayAnswer(ctx: Context, answer: GatewayAnswer): void {
  ctx.status = answer.status;
  if (answer.status === 204 || answer.status === 304) return;
  ctx.type = 'application/json';
  const body = answer.json;
  if (answer.status >= 400 && body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).some((key) => INTERNALS.has(key))) {
    ctx.body = JSON.stringify(Object.fromEntries(Object.entries(body).filter(([key]) => !INTERNALS.has(key))));
    return;
  }
  ctx.body = answer.raw;
}

export function iotRoutes({ iot }: AppDeps) {
  const reads: Array<{ method: 'GET' | 'POST'; path: GatewayPath; summary: string; query?: TSchema; body?: TSchema; answer: TSchema; example?: unknown }> = [
    { method: 'GET', path: '/codes/values', summary: 'Current values of points (codes in the query; request line and headers must stay under 16 KiB, else 431: use POST for many codes)', query: ValuesQuery, answer: ValuesAnswer },
    { method: 'POST', path: '/codes/values', summary: 'Current values of points', body: ValuesBody, answer: ValuesAnswer, example: { codes: ['meter.main.kwh', 'temp.outdoor'] } },
    { method: 'GET', path: '/codes/history', summary: 'History of one point between start and end (query)', query: HistoryQuery, answer: HistoryAnswer },
    { method: 'POST', path: '/codes/history', summary: 'History of one point between start and end', body: HistoryBody, answer: HistoryAnswer, example: { code: 'meter.main.kwh', start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' } },
    { method: 'GET', path: '/alarms', summary: 'Alarm history, newest first', query: AlarmsQuery, answer: AlarmsAnswer },
    { method: 'GET', path: '/alarm-configs', summary: 'Alarm configuration', answer: AlarmConfigsAnswer },
  ];
  const writes: Array<{ path: '/codes/set' | '/codes/force-set'; access: 'operator' | 'admin'; summary: string; body: typeof WriteBody | typeof ForceWriteBody; example: unknown }> = [
    { path: '/codes/set', access: 'operator', summary: 'Write a point value (setpoints and commands, within range)', body: WriteBody, example: { code: 'sp.zone1', value: 21.5 } },
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
        handler: async ({ body, ctx }) => {
          const answer = await iot.relay(read.method, read.path, read.body ? { body } : { query: ctx.querystring });
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
