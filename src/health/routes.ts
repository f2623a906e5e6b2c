// GET /api/health: public liveness for monitoring and the installer.
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../http/route.ts';
import { version } from '../packageRoot.ts';
import type { AppDeps } from '../appDeps.ts';
import { IotHealth } from '../iot/schemas.ts';

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptimeSec: Type.Integer(),
  database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  /** An unreachable gateway does not make the service unhealthy: it is reported, not failed on. */
  iot: IotHealth,
});

export function healthRoutes({ db, startedAt, iot }: AppDeps) {
  const ping = db.sqlite.prepare('SELECT 1').pluck();
  return [
    defineRoute({
      method: 'GET',
      path: '/api/health',
      access: 'public',
      summary: 'Service health: database reachable, version, uptime, IoT gateway last known state',
      tags: ['system'],
      schemas: { response: { 200: Health, 503: Health } },
      handler: () => {
        let database: 'ok' | 'unavailable' = 'ok';
        try {
          ping.get();
        } catch {
          database = 'unavailable';
        }
        const body = { status: database === 'ok' ? ('ok' as const) : ('degraded' as const), version, uptimeSec: Math.floor((Date.now() - startedAt) / 1000), database, iot: iot.health() };
        return new Reply(database === 'ok' ? 200 : 503, body);
      },
    }),
  ];
}
