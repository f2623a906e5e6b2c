// The IoT gateway proxy: relays documented calls with the service's gateway token, audits writes, tracks reachability for /api/health.
import net from 'node:net';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { AppError, BadGateway } from '../platform/errors.ts';
import type { AuthUser } from '../platform/http/route.ts';
import type { Logger } from '../platform/logger.ts';
import { GatewayClient, type Exchange, type GatewayAnswer, type GatewayPath } from './client.ts';
import { GatewayTokens } from './gatewayToken.ts';
import {
  gatewayPort,
  type AlarmPage,
  type GatewayPort,
  type HistoryOnGrid,
  type HistoryPoint,
  type PointInfo,
  type PointValue,
  type SetOutcome,
} from './port.ts';
import type { RunningSimulator } from './simulator/server.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';

export type { GatewayAnswer };

export type IotHealth = {
  gateway: 'reachable' | 'unreachable' | 'unknown';
  checkedAt: string | null;
  lastError: string | null;
  tokenAgeSec: number | null;
  tokenExpiresInSec: number | null;
};

export type WriteKind = 'set' | 'force-set';

/** A probe runs when nothing was exchanged with the gateway for this long. */
const PROBE_INTERVAL_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;

/** The proxy, and the typed port (port.ts) every other context reads and writes the gateway through. */
export class IotGateway implements GatewayPort {
  readonly client: GatewayClient;
  /** The built-in simulator when EMS_IOT_BASE_URL=sim. */
  simulator: RunningSimulator | undefined;
  readonly tokens: GatewayTokens;
  private state: { at: number; outcome: Exchange } | null = null;
  /**
   * The reachability probe, a named job (started by the gateway module): a TCP connect at start and whenever the
   * gateway has been quiet for PROBE_INTERVAL_MS; no token, no request, no side effect.
   */
  readonly probeJob: Repeating;
  private probedOnce = false;
  /** When the gateway last stopped answering; null while it answers (or before anything was tried). */
  private downSince: number | null = null;

  constructor(
    private readonly options: {
      baseUrl: string;
      timeoutMs: number;
      credentials: { username: string; password: string };
      db: Db;
      logger: Logger;
      audit: AuditLog;
    },
  ) {
    this.client = new GatewayClient(options.baseUrl, options.timeoutMs, (outcome) => this.noteExchange(outcome));
    this.tokens = new GatewayTokens(options.db, this.client, options.credentials, options.logger);
    this.probeJob = new Repeating(
      async () => {
        if (!this.probedOnce || !this.state || Date.now() - this.state.at >= PROBE_INTERVAL_MS) await this.probe();
        this.probedOnce = true;
      },
      PROBE_INTERVAL_MS,
      'gateway probe',
    );
  }

  get baseUrl(): string {
    return this.client.baseUrl;
  }

  private readonly port: GatewayPort = gatewayPort((method, path, input) => this.relay(method, path, input));

  values(codes: string[]): Promise<PointValue[]> {
    return this.port.values(codes);
  }

  history(code: string, from: number, to: number): Promise<HistoryPoint[] | null> {
    return this.port.history(code, from, to);
  }

  historyOnGrid(code: string, from: number, to: number, stepMs: number): Promise<HistoryOnGrid | null> {
    return this.port.historyOnGrid!(code, from, to, stepMs);
  }

  codes(): Promise<PointInfo[] | null> {
    return this.port.codes();
  }

  set(code: string, value: number): Promise<SetOutcome> {
    return this.port.set(code, value);
  }

  alarms(query: { start: string; page: number; pageSize: number }): Promise<AlarmPage> {
    return this.port.alarms(query);
  }

  /**
   * Sends one documented call with the gateway token. An upstream 401 renews the token once and sends the
   * call once more; a 401 after that is the gateway refusing the service itself (502, not 401, or the
   * dashboard would sign its user out).
   */
  async relay(method: 'GET' | 'POST', path: GatewayPath, input: { query?: string; body?: unknown }): Promise<GatewayAnswer> {
    const token = await this.tokens.valid();
    const answer = await this.client.exchange({ method, path, query: input.query, body: input.body, token });
    if (answer.status !== 401) return answer;
    const renewed = await this.tokens.afterRejection(token);
    const retried = await this.client.exchange({ method, path, query: input.query, body: input.body, token: renewed });
    if (retried.status === 401) {
      this.options.logger.error({ path }, 'IoT gateway rejected a freshly issued token');
      throw new BadGateway('gateway rejected the service credentials');
    }
    return retried;
  }

  /** A point write: sent once (again only after a 401 renewal), logged and audited with the gateway's answer. */
  async write(kind: WriteKind, user: AuthUser, body: { code: string; value: unknown }): Promise<GatewayAnswer> {
    const { logger, audit } = this.options;
    const entry = { actor: user, action: `iot.codes.${kind}`, resource: 'iot_point', resourceId: body.code };
    let answer: GatewayAnswer;
    try {
      answer = await this.relay('POST', kind === 'set' ? '/codes/set' : '/codes/force-set', { body });
    } catch (error) {
      // The outcome is unknown (timeout) or the write never left: both belong in the trail.
      const failure = error instanceof AppError ? { status: error.status, error: error.message } : { status: 500, error: 'internal error' };
      logger.warn({ userId: user.id, username: user.username, code: body.code, value: body.value, kind, ...failure }, 'IoT point write failed');
      audit.record({ ...entry, after: { value: body.value, ...failure } });
      throw error;
    }
    logger.info({ userId: user.id, username: user.username, code: body.code, value: body.value, kind, status: answer.status }, 'IoT point write');
    audit.record({ ...entry, after: { value: body.value, status: answer.status, answer: answer.json } });
    return answer;
  }

  /** The cached gateway token, renewed first when it is missing or about to expire. */
  async token(): Promise<{ token: string; expiresAt: string; refreshedAt: string }> {
    await this.tokens.valid();
    const row = this.tokens.current();
    return { token: row.token!, expiresAt: new Date(row.expiresAt!).toISOString(), refreshedAt: new Date(row.refreshedAt!).toISOString() };
  }

  /** Last known state only: never waits for the gateway. */
  health(): IotHealth {
    const row = this.tokens.current();
    const now = Date.now();
    const outcome = this.state?.outcome;
    return {
      gateway: !outcome ? 'unknown' : outcome.ok ? 'reachable' : 'unreachable',
      checkedAt: this.state ? new Date(this.state.at).toISOString() : null,
      lastError: outcome && !outcome.ok ? outcome.error : null,
      tokenAgeSec: row.token && row.refreshedAt ? Math.floor((now - row.refreshedAt) / 1000) : null,
      tokenExpiresInSec: row.token && row.expiresAt ? Math.floor((row.expiresAt - now) / 1000) : null,
    };
  }

  /** Stops the probe, then closes the client's connections. */
  async close(): Promise<void> {
    await this.probeJob.stop();
    await this.client.close();
  }

  private probe(): Promise<void> {
    const { origin } = this.client;
    const port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
    const host = origin.hostname.replace(/^\[|\]$/g, '');
    return new Promise((resolve) => {
      const socket = net.connect({ host, port });
      const done = (outcome: Exchange) => {
        socket.destroy();
        // A real exchange that finished meanwhile is better evidence than the probe.
        if (!this.state || this.state.at <= started) this.noteExchange(outcome);
        resolve();
      };
      const started = Date.now();
      socket.setTimeout(Math.min(PROBE_TIMEOUT_MS, this.options.timeoutMs), () => done({ ok: false, error: 'timeout' }));
      socket.once('connect', () => done({ ok: true }));
      socket.once('error', () => done({ ok: false, error: 'unreachable' }));
    });
  }

  /**
   * Logs the transitions only: one warning when the gateway stops answering (also when it is down from the start),
   * one when it answers again, also a warning so `journalctl -p warning` shows the outage's end and length
   * beside its start — never one per failed request or probe.
   */
  private noteExchange(outcome: Exchange): void {
    const now = Date.now();
    this.state = { at: now, outcome };
    if (outcome.ok) {
      if (this.downSince !== null) {
        this.options.logger.warn({ downForSec: Math.round((now - this.downSince) / 1000) }, 'IoT gateway reachable again');
        this.downSince = null;
      }
    } else if (this.downSince === null) {
      this.downSince = now;
      this.options.logger.warn({ error: outcome.error, gateway: this.client.origin.origin }, 'IoT gateway unreachable');
    }
  }
}
