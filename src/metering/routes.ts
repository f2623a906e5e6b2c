// GET /api/energy/collector: the collector's state and each meter's (published under energy, where the staff app shows it);
// the suspect runs (issue 52): listed, and confirmed as real by a person.
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../platform/http/route.ts';
import { ErrorBody, IdParams, stringEnum, Timestamp } from '../platform/http/schemas.ts';
import type { Collector } from './collector.ts';
import type { SuspectRuns } from './suspectRuns.ts';

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

const SuspectRun = Type.Object({
  id: Type.Integer(),
  meterId: Type.Integer(),
  meterName: Type.String(),
  startAt: Timestamp,
  endAt: Timestamp,
  intervals: Type.Integer({ description: '15-minute intervals in the run (it grows while the meter goes on reading the same value)' }),
  hours: Type.Number(),
  value: Type.Number({ description: "the repeated value per interval, in the meter's unit (kWh; m³ for gas and water)" }),
  source: stringEnum(['collector', 'import'] as const, { description: "who found it: the collector's watch or a history import" }),
  confirmedAt: Type.Union([Timestamp, Type.Null()], { description: 'confirmed as real (a closed building): its intervals count as measured' }),
  confirmedBy: Type.Union([Type.Integer(), Type.Null()], { description: 'the user who confirmed it' }),
});

const SuspectRunQuery = Type.Object(
  {
    meterId: Type.Optional(Type.Integer({ minimum: 1 })),
    state: Type.Optional(stringEnum(['open', 'confirmed'] as const, { description: 'open: not confirmed (its intervals are suspect); confirmed' })),
  },
  { additionalProperties: false },
);

export type SuspectRunRouteNeeds = { suspects: Pick<SuspectRuns, 'all' | 'get' | 'confirm'> };

export function suspectRunRoutes({ suspects }: SuspectRunRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/energy/suspect-runs',
      access: 'viewer',
      summary: 'Suspect runs: one value repeated (a flat zero) on a meter whose history reads more, newest first',
      description:
        'Runs found by the collector and the history import (docs/energy-data-quality.md, "Suspect runs"). An open run\'s intervals are ' +
        'suspect: kept out of baselines, anomaly models and EnPIs until a person confirms the run. At most 500. Changes nothing.',
      tags,
      schemas: { query: SuspectRunQuery, response: { 200: Type.Object({ items: Type.Array(SuspectRun) }) } },
      handler: ({ query }) => ({
        items: suspects.all({ meterId: query.meterId, open: query.state === undefined ? undefined : query.state === 'open' }),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/energy/suspect-runs/:id/confirm',
      access: 'operator',
      summary: 'Confirm a suspect run as real (the building was closed): its intervals count as measured',
      description:
        "From the run's data-problem alert or the meter's page. Audited; the run's alert clears after the usual hold-off. A confirmed run " +
        'stays confirmed (a second confirmation changes nothing).',
      tags,
      schemas: { params: IdParams, response: { 200: SuspectRun, 404: ErrorBody } },
      handler: ({ params, user }) => suspects.confirm(params.id, user),
    }),
  ];
}
