// The gateway simulator: speaks the IoT gateway contract (DESIGN.md) over plain node:http, for `EMS_IOT_BASE_URL=sim`, tests and benchmarks.
import type { Alarm } from './building.ts';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Building, WriteRejected, type PointValue } from './building.ts';
import { FAULT_KINDS, type FaultKind, type InjectedFault } from './plant.ts';

export type SimulatorOptions = {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  /** Lifetime of the tokens it issues. */
  tokenTtlSec?: number;
  now?: () => number;
  /** How many sub-meters the building has (3 built in; more are tenant sub-meters). */
  subMeters?: number;
  /** The HVAC plant (plant.ts) and its seeded faults; off unless given (EMS_SIM_EQUIPMENT=on). */
  equipment?: { faults?: InjectedFault[] };
  /** false: codes/history ignores its optional `step`, as a gateway that predates it does (tests of the fallback). */
  historyStep?: boolean;
};

export type RunningSimulator = { url: string; building: Building; close(): Promise<void> };

const BODY_LIMIT = 1024 * 1024;
/** Tokens outstanding at once; past it the oldest are dropped, as a real gateway's session table would. */
const TOKEN_LIMIT = 1000;
const MAX_CODES = 1000;
const HISTORY_MAX_SPAN_MS = 366 * 86_400_000;
/** Values per codes/history answer on a grid (`step`): a month at 5 minutes is 8,928. */
const HISTORY_STEP_MAX_VALUES = 20_000;
const JSON_TYPE = 'application/json';

type Reply = [status: number, body: unknown];

/**
 * A misbehaving gateway for the soak (`POST {base}/sim/gateway-fault`): `slow` answers every contract call after
 * `delayMs`, `garbage` answers the reads 200 with a body that is not JSON, `unauthorized` is a changed service password
 * (every token it issued dropped, every sign-in 401) until the fault ends.
 */
export const GATEWAY_FAULTS = ['slow', 'garbage', 'unauthorized'] as const;
export type GatewayFault = (typeof GATEWAY_FAULTS)[number];
const GARBAGE = Symbol('garbage');

class ClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(new ClientError(413, 'body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (size === 0) return resolve({});
      try {
        resolve(JSON.parse(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new ClientError(400, 'body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function object(value: unknown): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ClientError(400, 'body must be a JSON object');
  return value as Record<string, unknown>;
}

/** ISO 8601 or epoch milliseconds. */
function instant(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const ms = typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : Date.parse(String(value));
  if (!Number.isFinite(ms)) throw new ClientError(400, `${name} must be an ISO 8601 time or epoch milliseconds`);
  return ms;
}

function positiveInt(value: string | null, name: string, fallback: number, max: number): number {
  if (value === null || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new ClientError(400, `${name} must be an integer from 1 to ${max}`);
  return n;
}

export class GatewaySimulator {
  readonly building: Building;
  private readonly tokens = new Map<string, number>();
  private readonly username: string;
  private readonly password: string;
  private readonly tokenTtlSec: number;
  private readonly now: () => number;
  private readonly historyStep: boolean;
  /** The gateway fault in force (null: none) and, for `slow`, how long each answer waits. */
  fault: { mode: GatewayFault; delayMs: number } | null = null;

  constructor(options: SimulatorOptions = {}) {
    this.now = options.now ?? Date.now;
    this.building = new Building(this.now, options.subMeters, options.equipment);
    this.username = options.username ?? 'ems';
    this.password = options.password ?? 'ems-simulator';
    this.tokenTtlSec = options.tokenTtlSec ?? 3600;
    this.historyStep = options.historyStep ?? true;
  }

  /** The request listener: every answer is JSON, errors are { error }. */
  readonly handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    this.route(req).then(
      ([status, body]) => {
        if (body === GARBAGE) {
          res.writeHead(status, { 'content-type': JSON_TYPE });
          res.end('<html><body>502 Proxy Error</body></html>\u0000{"data":[');
        } else send(res, status, body);
      },
      (error: unknown) => {
        if (error instanceof ClientError) send(res, error.status, { error: error.message });
        else send(res, 500, { error: 'simulator error' });
      },
    );
  };

  private async route(req: http.IncomingMessage): Promise<Reply> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';

    // Simulator controls (not part of the gateway contract): an outage, counter resets, alarms raised and cleared by hand.
    if (path === '/sim/offline' && method === 'POST') {
      this.building.offline = object(await readJson(req)).offline === true;
      return [200, { offline: this.building.offline }];
    }
    if (path === '/sim/gateway-fault' && method === 'POST') return this.setFault(object(await readJson(req)));
    // The simulator's clock (the service's, for the built-in one), to the millisecond: the soak follows a sped-up clock by it.
    if (path === '/sim/clock' && method === 'GET') return [200, { now: new Date(this.now()).toISOString() }];
    if (this.building.offline) return [503, { error: 'gateway offline' }];
    const fault = this.fault;
    if (fault && !path.startsWith('/sim/')) {
      if (fault.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      if (fault.mode === 'garbage' && path.startsWith('/codes')) return [200, GARBAGE];
      if (fault.mode === 'unauthorized') return [401, { error: path === '/auth/token' ? 'bad credentials' : 'invalid or expired token' }];
    }
    if (path === '/sim/meters/reset' && method === 'POST') {
      const { code } = object(await readJson(req));
      return typeof code === 'string' && this.building.resetCounter(code) ? [200, { success: true }] : [404, { error: 'no energy counter by that code' }];
    }
    if (path === '/sim/load' && method === 'POST') {
      const { kw, kwPerMinute, minutes } = object(await readJson(req));
      const number = (value: unknown, name: string, fallback?: number) => {
        if (value === undefined && fallback !== undefined) return fallback;
        if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > 100_000) throw new ClientError(400, `${name} must be a number`);
        return value;
      };
      const span = number(minutes, 'minutes');
      if (span <= 0 || span > 7 * 24 * 60) throw new ClientError(400, 'minutes must be from 0 to a week');
      return [200, this.building.addLoad(number(kw, 'kw'), number(kwPerMinute, 'kwPerMinute', 0), span)];
    }
    if (path === '/sim/faults' && method === 'POST') return this.injectFault(object(await readJson(req)));
    if (path === '/sim/faults' && method === 'GET') return [200, { data: this.building.plant?.faults ?? [] }];
    if (path === '/auth/token') {
      if (method !== 'POST') throw new ClientError(405, 'use POST');
      return this.issueToken(object(await readJson(req)));
    }
    if (!this.authorized(req.headers.authorization)) return [401, { error: 'invalid or expired token' }];

    switch (path) {
      case '/codes':
        if (method === 'GET') return [200, { data: this.building.catalogue() }];
        break;
      case '/codes/values': {
        if (method === 'POST') return this.values(object(await readJson(req)).codes);
        if (method === 'GET')
          return this.values(
            query
              .getAll('codes')
              .flatMap((c) => c.split(','))
              .filter(Boolean),
          );
        break;
      }
      case '/codes/history': {
        if (method === 'POST') return this.history(object(await readJson(req)));
        if (method === 'GET')
          return this.history({ code: query.get('code'), start: query.get('start'), end: query.get('end'), step: query.get('step') ?? undefined });
        break;
      }
      case '/codes/set':
      case '/codes/force-set': {
        if (method !== 'POST') break;
        return this.write(path === '/codes/force-set', object(await readJson(req)));
      }
      case '/alarms':
        if (method === 'GET') return this.alarms(query);
        break;
      case '/alarm-configs':
        if (method === 'GET') return [200, { data: this.building.alarmConfigs() }];
        break;
      case '/sim/alarms': {
        if (method !== 'POST') break;
        const body = object(await readJson(req));
        const level = body.level ?? 'warning';
        if (typeof body.code !== 'string' || !body.code || !['info', 'warning', 'critical'].includes(level as string)) {
          throw new ClientError(400, 'code (string) and level (info, warning, critical) are required');
        }
        return [201, this.building.raiseAlarm(body.code, level as Alarm['level'], typeof body.message === 'string' ? body.message : `${body.code} alarm`)];
      }
      case '/sim/alarms/clear': {
        if (method !== 'POST') break;
        const { id } = object(await readJson(req));
        if (typeof id !== 'number') throw new ClientError(400, 'id (number) is required');
        return this.building.clearAlarm(id) ? [200, { success: true }] : [404, { error: `no active alarm ${id}` }];
      }
      default:
        return [404, { error: `no such endpoint: ${path}` }];
    }
    return [405, { error: `${method} is not supported on ${path}` }];
  }

  private setFault(body: Record<string, unknown>): Reply {
    if (body.mode === null || body.mode === undefined) {
      this.fault = null;
      return [200, { mode: null }];
    }
    if (!GATEWAY_FAULTS.includes(body.mode as GatewayFault)) throw new ClientError(400, `mode must be null or one of ${GATEWAY_FAULTS.join(', ')}`);
    const delayMs = body.delayMs ?? 0;
    if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > 86_400_000)
      throw new ClientError(400, 'delayMs must be an integer from 0 to 86400000');
    // A changed password: the tokens issued under the old one stop working.
    if (body.mode === 'unauthorized') this.tokens.clear();
    this.fault = { mode: body.mode as GatewayFault, delayMs };
    return [200, this.fault];
  }

  /** A plant fault from now (or `from`, not in the past: counters already read stay as read) for `minutes`. */
  private injectFault(body: Record<string, unknown>): Reply {
    const plant = this.building.plant;
    if (!plant) throw new ClientError(409, 'the simulated plant is off (EMS_SIM_EQUIPMENT=on)');
    if (!FAULT_KINDS.includes(body.kind as FaultKind)) throw new ClientError(400, `kind must be one of ${FAULT_KINDS.join(', ')}`);
    const now = this.now();
    const from = instant(body.from, 'from', now);
    if (from < now - 1000) throw new ClientError(400, 'from must not be in the past');
    const minutes = body.minutes ?? 60;
    if (typeof minutes !== 'number' || !(minutes > 0) || minutes > 366 * 24 * 60) throw new ClientError(400, 'minutes must be a number from 0 to a year');
    if (body.magnitude !== undefined && (typeof body.magnitude !== 'number' || !Number.isFinite(body.magnitude) || body.magnitude < -10 || body.magnitude > 10))
      throw new ClientError(400, 'magnitude must be a number from -10 to 10');
    const fault: InjectedFault = { kind: body.kind as FaultKind, from, to: from + minutes * 60_000, magnitude: body.magnitude as number | undefined };
    plant.inject(fault);
    return [201, { ...fault, from: new Date(fault.from).toISOString(), to: new Date(fault.to).toISOString() }];
  }

  private issueToken(body: Record<string, unknown>): Reply {
    if (body.username !== this.username || body.password !== this.password) return [401, { error: 'bad credentials' }];
    if (this.tokens.size >= TOKEN_LIMIT) this.sweepTokens();
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, this.now() + this.tokenTtlSec * 1000);
    return [200, { token, expiresIn: this.tokenTtlSec }];
  }

  private sweepTokens(): void {
    const now = this.now();
    for (const [token, expiresAt] of this.tokens) if (expiresAt <= now) this.tokens.delete(token);
    for (const token of this.tokens.keys()) {
      if (this.tokens.size < TOKEN_LIMIT) break;
      this.tokens.delete(token);
    }
  }

  private authorized(header: string | undefined): boolean {
    if (!header || !header.startsWith('Bearer ')) return false;
    const token = header.slice(7);
    const expiresAt = this.tokens.get(token);
    if (expiresAt === undefined) return false;
    if (expiresAt <= this.now()) {
      this.tokens.delete(token);
      return false;
    }
    return true;
  }

  private values(codes: unknown): Reply {
    if (!Array.isArray(codes) || codes.length === 0 || codes.length > MAX_CODES || !codes.every((c) => typeof c === 'string' && c.length > 0)) {
      throw new ClientError(400, `codes must be 1 to ${MAX_CODES} point codes`);
    }
    return [200, { data: codes.map((code: string) => this.building.read(code)) }];
  }

  private history(body: Record<string, unknown>): Reply {
    if (typeof body.code !== 'string' || !body.code) throw new ClientError(400, 'code is required');
    const now = this.now();
    const end = instant(body.end, 'end', now);
    const start = instant(body.start, 'start', end - 86_400_000);
    if (start >= end) throw new ClientError(400, 'start must be before end');
    if (end - start > HISTORY_MAX_SPAN_MS) throw new ClientError(400, 'at most 366 days per request');
    if (body.step !== undefined && this.historyStep) {
      // The optional step (DESIGN.md): the values on its grid, without a time per sample.
      const step = Number(body.step);
      if (!Number.isInteger(step) || step < 1) throw new ClientError(400, 'step must be a whole number of seconds, at least 1');
      if ((end - start) / (step * 1000) > HISTORY_STEP_MAX_VALUES) throw new ClientError(400, `at most ${HISTORY_STEP_MAX_VALUES} values per request`);
      const grid = this.building.historyOnGrid(body.code, start, end, step * 1000);
      if (!grid) return [404, { error: `unknown point ${body.code}` }];
      return [200, { start: new Date(grid.first).toISOString(), step, values: grid.values }];
    }
    const data = this.building.history(body.code, start, end);
    if (!data) return [404, { error: `unknown point ${body.code}` }];
    return [200, { data }];
  }

  private write(force: boolean, body: Record<string, unknown>): Reply {
    const { code, value } = body;
    if (typeof code !== 'string' || !code) throw new ClientError(400, 'code is required');
    const valid = typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string' || (force && value === null);
    if (!valid) throw new ClientError(400, 'value must be a number, boolean or string');
    try {
      if (force) this.building.forceSet(code, value as PointValue | null);
      else this.building.set(code, value as PointValue);
    } catch (error) {
      if (error instanceof WriteRejected) return [error.status, { success: false, error: error.message }];
      throw error;
    }
    return [200, { success: true }];
  }

  private alarms(query: URLSearchParams): Reply {
    const start = instant(query.get('start'), 'start', -Infinity);
    const end = instant(query.get('end'), 'end', Infinity);
    const page = positiveInt(query.get('page'), 'page', 1, 1_000_000);
    const pageSize = positiveInt(query.get('pageSize'), 'pageSize', 20, 200);
    const matching = this.building
      .alarmList()
      .filter((alarm) => {
        const at = Date.parse(alarm.raisedAt);
        return at >= start && at <= end;
      })
      .reverse();
    return [200, { data: matching.slice((page - 1) * pageSize, page * pageSize), total: matching.length }];
  }
}

/** Starts the simulator on host:port (port 0: any free port) and answers its base URL. */
export async function startGatewaySimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const simulator = new GatewaySimulator(options);
  const server = http.createServer(simulator.handle);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 20_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${port}`,
    building: simulator.building,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
