// GET /api/health: public liveness for monitoring and the installer.
import { type IotGateway, IotHealthSchema } from '../../gateway/index.ts';
import type { Collector } from '../../metering/index.ts';
import type { LoadSheddingConfig } from '../../analysis/index.ts';
import { syncState } from '../../fleetSync/index.ts';
import { unconfirmedSiteSettings, type SiteDefaultField } from '../../site/index.ts';
import type { Db } from '../../platform/db/client.ts';
import type { BackupScheduler } from '../backup/service.ts';
import type { Config } from '../../platform/config.ts';
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { version } from '../../platform/packageRoot.ts';
import { gatewayCondition } from './gatewayCondition.ts';
import { Timestamp } from '../../platform/http/schemas.ts';
import { storageWatchOf } from '../../platform/db/storageWatch.ts';
import type { StorageAlert } from './storageAlert.ts';

/** Fleet sync as monitoring needs it: the fleet's URL, the state and what waits; never the credential. */
const FleetSyncHealth = Type.Object(
  {
    state: Type.Union([Type.Literal('off'), Type.Literal('ok'), Type.Literal('failing'), Type.Literal('refused')], {
      description: 'off: not joined to a fleet; failing: unreachable or asked to wait; refused: the fleet refused a batch (lastError says why)',
    }),
    fleetUrl: Type.Union([Type.String(), Type.Null()]),
    unsentRows: Type.Integer({ description: 'meter days and alerts written since the fleet last acknowledged' }),
    lastSuccessAt: Type.Union([Timestamp, Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'fleet sync (emsctl fleet join); null while the database is unavailable' },
);
import { HEALTH_EXAMPLE } from './examples.ts';

/** Times and outcomes only: no file names, paths or error text on a public route. */
const BackupHealth = Type.Object({
  enabled: Type.Boolean(),
  lastRunAt: Type.Union([Timestamp, Type.Null()]),
  lastStatus: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Null()]),
  lastGoodAt: Type.Union([Timestamp, Type.Null()], { description: 'when the newest good backup was taken' }),
  target: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('never'), Type.Literal('off')], {
    description: 'the last copy to EMS_BACKUP_TARGET; never: none since it was set; off: no target set',
  }),
  drill: Type.Union([Type.Object({ at: Timestamp, status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]) }), Type.Null()], {
    description: 'the last weekly restore drill',
  }),
});

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptimeSec: Type.Integer(),
  database: Type.Union([Type.Literal('ok'), Type.Literal('full'), Type.Literal('unavailable')], {
    description: 'full: a write failed for lack of disk space and none has succeeded since, or under 1 MiB is left',
  }),
  /** An unreachable gateway does not make the service unhealthy: it is reported, not failed on. */
  iot: Type.Composite([
    Type.Omit(IotHealthSchema, ['gateway']),
    Type.Object({
      gateway: Type.Union([Type.Literal('reachable'), Type.Literal('degraded'), Type.Literal('unreachable'), Type.Literal('unknown')], {
        description: 'degraded: it answers, but the meter collection fails (e.g. 503 to every read)',
      }),
    }),
  ]),
  /** Backups do not make the service unhealthy either: monitoring reads these fields to alert on them. */
  backup: Type.Union([BackupHealth, Type.Null()], { description: 'null while the database is unavailable' }),
  fleet: Type.Union([FleetSyncHealth, Type.Null()]),
  site: Type.Union(
    [
      Type.Object({
        defaults: Type.Array(Type.Union([Type.Literal('siteName'), Type.Literal('timezone'), Type.Literal('currency')]), {
          description:
            'the site settings nobody has confirmed yet (a new box starts with "EMS", UTC, EUR); a field set to the same value counts as confirmed; empty once all are set',
        }),
      }),
      Type.Null(),
    ],
    { description: 'whether an admin has set the site settings (PUT /api/configs or emsctl site set); null while the database is unavailable' },
  ),
  collector: Type.Object(
    {
      meters: Type.Integer({ description: 'meters read by the energy collector' }),
      lastOkAt: Type.Union([Timestamp, Type.Null()]),
      lagSec: Type.Union([Type.Integer(), Type.Null()], { description: 'seconds since the last good collection' }),
      state: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('idle')], { description: 'failing: the last collection did not work' }),
      failingSince: Type.Union([Timestamp, Type.Null()]),
      metersNotOk: Type.Integer({ description: 'meters stale, failing or refusing readings (GET /api/energy/collector lists them)' }),
    },
    { description: 'the energy collector; its errors are on GET /api/energy/collector (operators)' },
  ),
  loadShedding: Type.Union(
    [
      Type.Object({
        shed: Type.Array(Type.String(), { description: 'gateway points load shedding holds switched off now' }),
        restoreFailing: Type.Array(Type.String(), {
          description: 'of those, the points whose restore the gateway did not confirm (a critical alert; tried again every 5 s)',
        }),
      }),
      Type.Null(),
    ],
    { description: 'null while the database is unavailable' },
  ),
  storageAlert: Type.Union([Type.Object({ since: Timestamp, written: Type.Boolean() }), Type.Null()], {
    description:
      'the critical "data disk is full" alert of the episode in hand (looked at every 10 s): since when, and whether it could be written yet (it is held in memory while the disk has no room for it, and written, with its clearing, once there is); null: the disk has room',
  }),
});

export type HealthRouteNeeds = {
  db: Db;
  startedAt: number;
  iot: IotGateway;
  backups: BackupScheduler;
  collector: Collector;
  config: Config;
  analysis: { loadShedding: Pick<LoadSheddingConfig, 'points'> };
  /** The disk-full alert held or in hand (storageAlert.ts). */
  storageAlert: Pick<StorageAlert, 'view'>;
};

export function healthRoutes({ db, startedAt, iot, backups, collector, config, analysis, storageAlert }: HealthRouteNeeds) {
  // Raw: a probe of the connection that reads no table (test/structure/rawStatements.test.ts lets such statements through).
  const ping = db.sqlite.prepare('SELECT 1').pluck();
  // The site's settings as site/ keeps them (read again once platform_config is written, by any process).
  const unconfirmed = unconfirmedSiteSettings(db);
  const storage = storageWatchOf(db, config.dataDir);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/health',
      responseExample: HEALTH_EXAMPLE,
      access: 'public',
      summary: 'Service health: database reachable, version, uptime, IoT gateway last known state, backups and the last restore drill',
      description:
        'For monitoring and the installer: 200 while the database answers, 503 (same body, status degraded) when it does not. An unreachable gateway or a failed backup is reported in its field, never failed on. Changes nothing.',
      tags: ['system'],
      schemas: { response: { 200: Health, 503: Health } },
      handler: () => {
        let database: 'ok' | 'full' | 'unavailable' = 'ok';
        try {
          ping.get();
          database = storage.state();
        } catch {
          database = 'unavailable';
        }
        let backup: ReturnType<typeof backups.health> | null = null;
        try {
          if (database !== 'unavailable') backup = backups.health();
        } catch {
          // reported as null: the database answered the ping but not this read
        }
        let fleet: {
          state: 'off' | 'ok' | 'failing' | 'refused';
          fleetUrl: string | null;
          unsentRows: number;
          lastSuccessAt: string | null;
          lastError: string | null;
        } | null = null;
        try {
          if (database !== 'unavailable') {
            const sync = syncState(db);
            fleet = { state: sync.state, fleetUrl: sync.fleetUrl, unsentRows: sync.unsentRows, lastSuccessAt: sync.lastSuccessAt, lastError: sync.lastError };
          }
        } catch {
          // reported as null: the database answered the ping but not this read
        }
        let site: { defaults: SiteDefaultField[] } | null = null;
        try {
          if (database !== 'unavailable') site = { defaults: unconfirmed() };
        } catch {
          // reported as null: the database answered the ping but not this read
        }
        const collected = collector.health();
        const gateway = iot.health();
        let metersNotOk = 0;
        try {
          if (database === 'ok') metersNotOk = collector.metersNotOk();
        } catch {
          // the database answered the ping but not this read
        }
        let loadShedding: { shed: string[]; restoreFailing: string[] } | null = null;
        try {
          if (database !== 'unavailable') {
            const shed = analysis.loadShedding.points().filter((p) => p.shedAt !== null);
            loadShedding = { shed: shed.map((p) => p.code), restoreFailing: shed.filter((p) => p.lastError !== null).map((p) => p.code) };
          }
        } catch {
          // the database answered the ping but not this read
        }
        const body = {
          status: database === 'ok' ? ('ok' as const) : ('degraded' as const),
          version,
          uptimeSec: Math.floor((Date.now() - startedAt) / 1000),
          database,
          iot: { ...gateway, gateway: gatewayCondition(gateway, collected) },
          backup,
          fleet,
          site,
          collector: {
            meters: collected.meters,
            lastOkAt: collected.lastOkAt,
            lagSec: collected.lagSec,
            state: collected.state,
            failingSince: collected.failingSince,
            metersNotOk,
          },
          loadShedding,
          storageAlert: storageAlert.view(),
        };
        return new Reply(database === 'ok' ? 200 : 503, body);
      },
    }),
  ];
}
