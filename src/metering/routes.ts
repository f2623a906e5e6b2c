// GET /api/energy/collector: the collector's state and each meter's (published under energy, where the staff app shows it).
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../platform/http/route.ts';
import { stringEnum, Timestamp } from '../platform/http/schemas.ts';
import type { Collector } from './collector.ts';

const tags = ['energy'];

const CollectorStatus = Type.Object({
  lastRunAt: Type.Union([Timestamp, Type.Null()]),
  lastOkAt: Type.Union([Timestamp, Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  meters: Type.Integer({ description: 'meters read by the collector' }),
  lagSec: Type.Union([Type.Integer(), Type.Null()], { description: 'seconds since the last good collection' }),
  state: stringEnum(['ok', 'failing', 'idle'] as const, {
    description: 'failing: the last collection did not work (the gateway may still answer: see lastError); idle: none yet',
  }),
  failingSince: Type.Union([Timestamp, Type.Null()]),
  consecutiveFailures: Type.Integer(),
  clockStepsBack: Type.Integer({ description: "times the box's clock was seen stepping back since the service started" }),
  refused: Type.Integer({ description: 'readings refused since the service started, all meters' }),
  meterStates: Type.Array(
    Type.Object({
      meterId: Type.Integer(),
      code: Type.String(),
      state: stringEnum(['ok', 'stale', 'failing', 'refusing'] as const, {
        description:
          'refusing: its last reading was refused; failing: no good value (collection failing, bad quality, not answered); stale: last counted reading older than two intervals',
      }),
      lastReadingAt: Type.Union([Timestamp, Type.Null()], { description: 'the last reading counted (the gateway’s time)' }),
      lastValue: Type.Union([Type.Number(), Type.Null()]),
      lagSec: Type.Union([Type.Integer(), Type.Null()], { description: 'seconds from the last counted reading to now' }),
      refused: Type.Integer({ description: 'readings refused since the service started' }),
      jitter: Type.Integer({ description: 'small counter decreases held as register jitter since the service started' }),
      lastRefusal: Type.Union([
        Type.Object({
          at: Timestamp,
          readingAt: Type.Union([Type.String(), Type.Null()]),
          value: Type.Union([Type.Number(), Type.Null()]),
          reason: Type.String(),
        }),
        Type.Null(),
      ]),
    }),
    { description: 'each collected meter' },
  ),
});

export type CollectorRouteNeeds = { collector: Pick<Collector, 'health' | 'meterHealth'> };

export function collectorRoutes({ collector }: CollectorRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/collector',
      access: 'operator',
      summary: 'The meter collector: last run, last good collection, lag and last error, and each meter’s state',
      description: 'The state of the background collector that reads the meters from the gateway every interval. Changes nothing.',
      tags,
      schemas: { response: { 200: CollectorStatus } },
      handler: () => ({ ...collector.health(), meterStates: collector.meterHealth() }),
    }),
  ];
}
