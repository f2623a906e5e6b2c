// GET /api/events: the live stream (server-sent events) for signed-in staff.
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { LIVE_DESCRIPTION, LiveQuery } from './schemas.ts';
import type { LiveEvents } from './service.ts';

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
      handler: ({ query, user, ctx }) => {
        const stream = new PassThrough();
        const sink = {
          write(chunk: string) {
            if (stream.writableLength > MAX_UNREAD_BYTES) {
              stop();
              stream.end();
            } else stream.write(chunk);
          },
          end: () => stream.end(),
        };
        // Throws 429 before anything is sent when the user or the box is at its bound.
        const stop = live.subscribe(user.id, sink, ctx.get('last-event-id') || query.lastEventId, tokenExpiry(ctx.get('authorization')));
        ctx.req.socket.setTimeout(0);
        ctx.req.socket.setNoDelay(true);
        ctx.req.on('close', stop);
        stream.on('close', stop);
        ctx.status = 200;
        ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
        ctx.set('Cache-Control', 'no-cache, no-transform');
        ctx.set('X-Accel-Buffering', 'no');
        ctx.body = stream;
      },
    }),
  ];
}
