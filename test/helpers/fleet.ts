// The fleet service in-process for tests: a private PostgreSQL cluster (one per test file), the shipped migrations,
// an app listening on 127.0.0.1:0, an admin token, and helpers to enrol sites and send batches over real HTTP(S).
import type http from 'node:http';
import pino from 'pino';
import { addUser, createFleetApp, listenFleet } from '../../src/fleet/app.ts';
import type { FleetSsoConfig } from '../../src/fleet/sso.ts';
import type { DatabaseClock } from '../../src/fleet/clock.ts';
import { migrateFleetDb, openFleetDb, type FleetDb } from '../../src/fleet/db.ts';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import type { IngestLimits } from '../../src/fleet/ingest.ts';
import type { Batch } from '../../src/fleet/schemas.ts';
import { type PostgresCluster, startPostgres } from './postgres.ts';

export type FleetInstance = { url: string; db: FleetDb; server: http.Server; close(): Promise<void> };

export async function startFleetDatabase(): Promise<PostgresCluster> {
  return startFleetDatabaseWith({});
}

export async function startFleetDatabaseWith(options: { durable?: boolean }): Promise<PostgresCluster> {
  const cluster = await startPostgres(options);
  await migrateFleetDb(cluster.url);
  return cluster;
}

export async function startFleet(
  databaseUrl: string,
  options: {
    maxConcurrentIngests?: number;
    limits?: IngestLimits;
    now?: () => number;
    tls?: { certFile: string; keyFile: string };
    port?: number;
    /** The portfolio read from this streaming replica (EMS_FLEET_READ_DATABASE_URL). */
    readDatabaseUrl?: string;
    clock?: DatabaseClock;
    /** Single sign-on with this issuer; the fleet's public URL is the address it listens on. */
    sso?: Omit<FleetSsoConfig, 'publicUrl'>;
  } = {},
): Promise<FleetInstance> {
  const db = openFleetDb(databaseUrl, { poolSize: (options.maxConcurrentIngests ?? 4) + 4 });
  const readDb = options.readDatabaseUrl ? openFleetDb(options.readDatabaseUrl, { poolSize: 4 }) : undefined;
  // FleetSso reads the public URL when it makes a redirect URI: set once the port is known.
  const sso: FleetSsoConfig | null = options.sso ? { ...options.sso, publicUrl: 'http://127.0.0.1/' } : null;
  const app = createFleetApp({
    sso,
    db,
    readDb,
    clock: options.clock,
    logger: pino({ level: process.env.FLEET_TEST_LOG ?? 'silent' }),
    maxConcurrentIngests: options.maxConcurrentIngests ?? 4,
    limits: options.limits,
    now: options.now,
  });
  const { server, url } = await listenFleet(app, { host: '127.0.0.1', port: options.port ?? 0, tls: options.tls ?? null });
  if (sso) sso.publicUrl = url;
  return {
    url,
    db,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.pool.end();
      await readDb?.pool.end();
    },
  };
}

export async function adminToken(db: FleetDb, name = `admin-${Math.random().toString(36).slice(2)}`): Promise<string> {
  return (await addUser(db.pool, name, 'admin')).token;
}

/** Enrols a site over HTTP with a fresh code; returns its id and credential. */
export async function enrolSite(fleet: FleetInstance, name: string): Promise<{ siteId: string; credential: string }> {
  const { code } = await createEnrolmentCode(fleet.db.pool, name);
  const response = await fetch(`${fleet.url}/api/fleet/enrol`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (response.status !== 201) throw new Error(`enrolment failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { siteId: string; credential: string };
}

export async function sendBatch(url: string, credential: string, batch: Partial<Batch> | unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${url}/api/fleet/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
    body: typeof batch === 'string' ? batch : JSON.stringify(batch),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

export async function getJson(url: string, token: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.json() };
}

export const METERS: NonNullable<Batch['meters']> = [
  { key: '1', name: 'Main incomer', commodity: 'electricity', unit: 'kWh', area: null, siteTotal: true },
  { key: '2', name: 'Gas', commodity: 'gas', unit: 'kWh', area: null, siteTotal: true },
  { key: '3', name: 'Chillers', commodity: 'electricity', unit: 'kWh', area: 'Plant', siteTotal: false },
];

/** A batch of 15-minute rows for `meters` from `from` (ms) for `count` intervals, sequence numbers from after+1. */
export function intervalBatch(options: {
  after: number;
  from: number;
  count: number;
  meters?: string[];
  value?: (meter: string, i: number) => number;
  sentAt?: number;
  withMetadata?: boolean;
}): Batch {
  const meters = options.meters ?? ['1', '2'];
  const intervals: NonNullable<Batch['intervals']> = [];
  let seq = options.after;
  for (let i = 0; i < options.count; i++) {
    for (const meter of meters) {
      intervals.push({
        meter,
        start: new Date(options.from + i * 900_000).toISOString(),
        value: options.value ? options.value(meter, i) : 1 + i / 4,
        quality: 'measured',
        seq: ++seq,
      });
    }
  }
  return {
    sentAt: new Date(options.sentAt ?? Date.now()).toISOString(),
    after: options.after,
    through: seq,
    ...(options.withMetadata === false
      ? {}
      : { site: { name: 'Site', timezone: 'Europe/Berlin', floorAreaM2: 1000 }, areas: [{ name: 'Plant', floorAreaM2: 200 }], meters: METERS }),
    intervals,
  };
}

/** The start of the current UTC quarter hour minus `quarters` quarter hours. */
export function quarterAgo(quarters: number, now = Date.now()): number {
  return Math.floor(now / 900_000) * 900_000 - quarters * 900_000;
}
