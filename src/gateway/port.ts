// The gateway as one typed port: the calls the other contexts make (values, history, codes, set, alarms), each
// answer's JSON checked here and nowhere else (DESIGN.md "IoT gateway contract"). The /api/iot proxy routes relay the
// gateway's bytes unchanged and do not come through here; every other reader and writer does
// (test/structure/gatewayPort.test.ts).
import { BadGateway } from '../platform/errors.ts';
import type { GatewayAnswer, GatewayPath } from './client.ts';

/** A point's current value as the gateway reported it. */
export type PointValue = {
  code: string;
  /** The gateway's time of the value; null when it sent none or one that is not a time. */
  at: number | null;
  /** False when the gateway marked the value with a quality other than 'good'. */
  good: boolean;
  /** A finite number or a boolean (a command point); null when absent, not finite or of another type. */
  value: number | boolean | null;
};

/** One reading of a point's history: a time and a finite number. */
export type HistoryPoint = { at: number; value: number };

/** One entry of the gateway's point catalogue; a field that is absent or not a string is null. */
export type PointInfo = { code: string; name: string | null; unit: string | null; kind: string | null };

/** The answer to a point write: the gateway's status and its `success` (null when it sent none). */
export type SetOutcome = { status: number; success: boolean | null };

/**
 * One alarm row with its fields typed; a field that is absent or not a string is null. The bounds on them (code
 * length, believable times) are facility's (src/facility/notifications/poller.ts `occurrenceOf`).
 */
export type AlarmRow = { code: string | null; level: string | null; message: string | null; raisedAt: string | null; clearedAt: string | null };

/**
 * A history answered on a regular grid: `values[i]` is the point's value at `first + i × stepMs` (NaN: none), or the
 * gateway's plain readings when it ignored the step.
 */
export type HistoryOnGrid = { grid: { first: number; stepMs: number; values: Float64Array } } | { points: HistoryPoint[] };

/** A page of the gateway's alarms and its `total` (NaN when it sent something that is not a number). */
export type AlarmPage = { rows: AlarmRow[]; total: number };

/** What the other contexts ask the gateway. */
export interface GatewayPort {
  /** Current values of the codes. Throws GatewayRefused on a status other than 200, BadGateway without a data list. */
  values(codes: string[]): Promise<PointValue[]>;
  /**
   * The readings in [from, to] (epoch ms) in the gateway's order; rows without a time or a finite value and rows
   * outside what was asked are dropped. null when the gateway keeps no history for the code (404).
   */
  history(code: string, from: number, to: number): Promise<HistoryPoint[] | null>;
  /**
   * The readings in [from, to] on a grid of `stepMs`, asked with codes/history's optional `step` (DESIGN.md "IoT gateway
   * contract"): a gateway honouring it answers `{ start, step, values }` and this gives `{ grid }` (NaN where it had no
   * value); a gateway that ignores it answers its usual `{ data }` and this gives those readings as `history` does
   * (`{ points }`), so the caller knows to read as before. null on 404. Optional: ports that lack it are read by `history`.
   */
  historyOnGrid?(code: string, from: number, to: number, stepMs: number): Promise<HistoryOnGrid | null>;
  /** The point catalogue; null when the gateway has none (404). */
  codes(): Promise<PointInfo[] | null>;
  /** A point write, sent once (SPEC: writes are never retried but after a token renewal). Never throws on a status. */
  set(code: string, value: number): Promise<SetOutcome>;
  /** One page of alarms raised since `start` (ISO). */
  alarms(query: { start: string; page: number; pageSize: number }): Promise<AlarmPage>;
}

/** The gateway answered, with a status the call cannot use. A 502 to a client, as any BadGateway. */
export class GatewayRefused extends BadGateway {
  constructor(
    /** The gateway's status (the error's own `status` stays 502). */
    readonly gatewayStatus: number,
    message: string,
  ) {
    super(message);
  }
}

/** The one call the port needs of the proxy: a documented call with the gateway token (IotGateway.relay). */
export type Relay = (method: 'GET' | 'POST', path: GatewayPath, input: { query?: string; body?: unknown }) => Promise<GatewayAnswer>;

/** The port over a relay. */
export function gatewayPort(relay: Relay): GatewayPort {
  return {
    async values(codes) {
      const answer = await relay('POST', '/codes/values', { body: { codes } });
      if (answer.status !== 200) throw new GatewayRefused(answer.status, `the gateway answered ${answer.status} to codes/values`);
      const data = dataOf(answer);
      if (!data) throw new BadGateway('the gateway answered codes/values without a data list');
      const values: PointValue[] = [];
      for (const row of data) {
        const code = field(row, 'code');
        if (typeof code !== 'string') continue;
        const quality = field(row, 'quality');
        const value = field(row, 'value');
        values.push({
          code,
          at: time(field(row, 'ts')),
          good: quality === undefined || quality === 'good',
          value: typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) ? value : null,
        });
      }
      return values;
    },

    async history(code, from, to) {
      const answer = await relay('POST', '/codes/history', { body: { code, start: new Date(from).toISOString(), end: new Date(to).toISOString() } });
      if (answer.status === 404) return null;
      if (answer.status !== 200) throw new GatewayRefused(answer.status, `the gateway answered ${answer.status} to codes/history for ${code}`);
      const data = dataOf(answer);
      if (!data) throw new BadGateway('the gateway answered codes/history without a data list');
      return readings(data, from, to);
    },

    async historyOnGrid(code, from, to, stepMs) {
      const step = stepMs / 1000;
      const body = { code, start: new Date(from).toISOString(), end: new Date(to).toISOString(), step };
      const answer = await relay('POST', '/codes/history', { body });
      if (answer.status === 404) return null;
      if (answer.status !== 200) throw new GatewayRefused(answer.status, `the gateway answered ${answer.status} to codes/history for ${code}`);
      const values = field(answer.json, 'values');
      if (!Array.isArray(values)) {
        // The step was ignored: the plain answer, read as history reads it.
        if (!dataOf(answer)) throw new BadGateway('the gateway answered codes/history without a data list');
        return { points: readings(dataOf(answer)!, from, to) };
      }
      const first = time(field(answer.json, 'start'));
      if (first === null || field(answer.json, 'step') !== step)
        throw new BadGateway('the gateway answered codes/history with values but not the start and step asked');
      const grid = new Float64Array(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        const at = first + i * stepMs;
        grid[i] = typeof value === 'number' && Number.isFinite(value) && at >= from && at <= to ? value : Number.NaN;
      }
      return { grid: { first, stepMs, values: grid } };
    },

    async codes() {
      const answer = await relay('GET', '/codes', {});
      if (answer.status === 404) return null;
      const data = dataOf(answer);
      if (answer.status !== 200 || !data) {
        const message = `the gateway answered ${answer.status} without a point catalogue`;
        throw answer.status !== 200 ? new GatewayRefused(answer.status, message) : new BadGateway(message);
      }
      const points: PointInfo[] = [];
      for (const row of data) {
        const code = field(row, 'code');
        if (typeof code === 'string') points.push({ code, name: text(field(row, 'name')), unit: text(field(row, 'unit')), kind: text(field(row, 'kind')) });
      }
      return points;
    },

    async set(code, value) {
      const answer = await relay('POST', '/codes/set', { body: { code, value } });
      const success = field(answer.json, 'success');
      return { status: answer.status, success: typeof success === 'boolean' ? success : null };
    },

    async alarms({ start, page, pageSize }) {
      const query = new URLSearchParams({ start, page: String(page), pageSize: String(pageSize) }).toString();
      const answer = await relay('GET', '/alarms', { query });
      if (answer.status !== 200) throw new GatewayRefused(answer.status, `the gateway answered ${answer.status}`);
      // A page without a data list is an empty page (the poll reads on), as before the port.
      const rows = (dataOf(answer) ?? []).map(
        (row): AlarmRow => ({
          code: text(field(row, 'code')),
          level: text(field(row, 'level')),
          message: text(field(row, 'message')),
          raisedAt: text(field(row, 'raisedAt')),
          clearedAt: text(field(row, 'clearedAt')),
        }),
      );
      return { rows, total: Number(field(answer.json, 'total') ?? 0) };
    },
  };
}

/** A history answer's rows with a time and a finite value, within [from, to]. */
function readings(data: unknown[], from: number, to: number): HistoryPoint[] {
  const points: HistoryPoint[] = [];
  for (const row of data) {
    const at = time(field(row, 'ts'));
    const value = field(row, 'value');
    // Only what was asked for: a gateway answering readings outside the span is not believed about them.
    if (at !== null && at >= from && at <= to && typeof value === 'number' && Number.isFinite(value)) points.push({ at, value });
  }
  return points;
}

function dataOf(answer: GatewayAnswer): unknown[] | null {
  const data = field(answer.json, 'data');
  return Array.isArray(data) ? data : null;
}

/** A field of an object; undefined for anything else (null, a number, an array's "code"). */
function field(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function time(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}
