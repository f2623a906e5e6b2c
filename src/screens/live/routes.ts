// GET /api/events: the live stream (server-sent events) for signed-in staff.
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { LIVE_DESCRIPTION, LiveQuery, PUBLIC_LIVE_DESCRIPTION } from './schemas.ts';
import type { LiveEvents, LiveHolder } from './service.ts';
import type { Context } from 'koa';

export type LiveRouteNeeds = { live: LiveEvents };

/** A client that reads nothing is dropped once this much waits for it, instead of held in memory. */
const MAX_UNREAD_BYTES = 256 * 1024;

/** The access token's expiry (the router has verified the token already): the stream ends then. */
function tokenExpiry(authorization: string): number | null {
  const payload = authorization.replace(/^Bearer\s+/i, '').split('.')[1];
  if (!payload) return null;
  try {
    const { exp } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof exp === 'number' ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/** Streams `live` to the request's client as server-sent events; a 429 is thrown before anything is sent. */
function streamTo(live: LiveEvents, ctx: Context, holder: LiveHolder, lastEventId: string | undefined, closeAt: number | null): void {
  const stream = new PassThrough();
  let stop = () => {};
  const sink = {
    write(chunk: string) {
      if (stream.writableLength > MAX_UNREAD_BYTES) {
        stop();
        stream.end();
      } else stream.write(chunk);
    },
    end: () => stream.end(),
  };
  stop = live.subscribe(holder, sink, ctx.get('last-event-id') || lastEventId, closeAt);
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.req.on('close', stop);
  stream.on('close', stop);
  ctx.status = 200;
  ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = stream;
}

export function liveRoutes({ live }: LiveRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/events',
      access: 'viewer',
      summary: 'The live stream: power, the newest interval, alert changes and job states (server-sent events)',
      description: LIVE_DESCRIPTION,
      tags: ['overview'],
      raw: { contentType: 'text/event-stream' },
      schemas: {
        query: LiveQuery,
        response: {
          200: Type.String({ description: 'text/event-stream' }),
          400: ErrorBody,
          401: ErrorBody,
          429: ErrorBody,
        },
      },
      handler: ({ query, user, ctx }) => streamTo(live, ctx, { userId: user.id }, query.lastEventId, tokenExpiry(ctx.get('authorization'))),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/wallboard/events',
      access: 'public',
      summary: 'What the lobby wallboard listens to: only that power, the intervals or the alerts changed (server-sent events, no token)',
      description: PUBLIC_LIVE_DESCRIPTION,
      tags: ['dashboard'],
      raw: { contentType: 'text/event-stream' },
      schemas: { query: LiveQuery, response: { 200: Type.String({ description: 'text/event-stream' }), 400: ErrorBody, 429: ErrorBody } },
      handler: ({ query, ctx }) => streamTo(live, ctx, { address: ctx.ip }, query.lastEventId, null),
    }),
  ];
}
