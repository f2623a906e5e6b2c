// Reference child: the alerts page as a user would write it on fastify + better-sqlite3 instead of this stack — the same
// database file, the same bearer check (HS256 token under the stored secret, verified tokens remembered, the user's row
// read), querystring and response schemas (fastify's ajv and fast-json-stringify), one pino line per request.
// Usage: node --import tsx test/bench/fastifyAlerts.ts <data dir> <log file>; prints {"url"} once it listens.
import { createSecretKey } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import jwt from 'jsonwebtoken';
import { pino } from 'pino';

const [dataDir, logFile] = process.argv.slice(2);
const db = new Database(path.join(dataDir, 'ems.db'));
db.pragma('journal_mode = WAL');
db.pragma('busy_timeout = 5000');
const secret = (db.prepare("SELECT value FROM app_settings WHERE key = 'jwt_secret'").pluck().get() as string | undefined) ?? '';
const key = createSecretKey(Buffer.from(secret));
const verified = new Map<string, { userId: number; exp: number }>();
const userById = db.prepare('SELECT id, username, email, role FROM users WHERE id = ?');
const count = db.prepare('SELECT count(*) FROM alerts').pluck();
const COLUMNS =
  'id, title, message, level, source, area, status, occurred_at AS occurredAt, acknowledged_at AS acknowledgedAt, acknowledged_by AS acknowledgedBy, ' +
  'resolved_at AS resolvedAt, resolved_by AS resolvedBy, alarm_key AS alarmKey, cleared_at AS clearedAt, shelved_until AS shelvedUntil, ' +
  'shelved_by AS shelvedBy, shelve_reason AS shelveReason, created_at AS createdAt, updated_at AS updatedAt';
const page = db.prepare(`SELECT ${COLUMNS} FROM alerts ORDER BY occurred_at DESC, id DESC LIMIT ? OFFSET ?`);

const nullable = (type: string) => ({ type: [type, 'null'] });
const Alert = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    title: { type: 'string' },
    message: { type: 'string' },
    level: { type: 'string' },
    source: nullable('string'),
    area: nullable('string'),
    status: { type: 'string' },
    occurredAt: { type: 'string' },
    acknowledgedAt: nullable('string'),
    acknowledgedBy: nullable('integer'),
    resolvedAt: nullable('string'),
    resolvedBy: nullable('integer'),
    alarmKey: nullable('string'),
    clearedAt: nullable('string'),
    shelvedUntil: nullable('string'),
    shelvedBy: nullable('integer'),
    shelveReason: nullable('string'),
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
  required: ['id', 'title', 'message', 'level', 'status', 'occurredAt', 'createdAt', 'updatedAt'],
};

const log = pino({ base: { service: 'ref' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: logFile, sync: true }));
const app = Fastify({ logger: false });

app.addHook('onRequest', async (request, reply) => {
  const match = /^Bearer ([A-Za-z0-9\-_.]+)$/.exec(request.headers.authorization ?? '');
  let known = match ? verified.get(match[1]) : undefined;
  if (match && !known) {
    try {
      const payload = jwt.verify(match[1], key, { algorithms: ['HS256'] }) as { userId: number; exp: number };
      known = { userId: payload.userId, exp: payload.exp };
      verified.set(match[1], known);
    } catch {
      // refused below
    }
  }
  const user = known && known.exp > Date.now() / 1000 ? userById.get(known.userId) : undefined;
  if (!user) return reply.code(401).send({ error: 'Authentication required', code: 'UNAUTHENTICATED' });
  (request as { user?: unknown }).user = user;
});

app.addHook('onResponse', async (request, reply) => {
  log.info(
    {
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      path: request.url,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    },
    'request',
  );
});

app.get(
  '/api/alerts',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: { page: { type: 'integer', minimum: 1, default: 1 }, pageSize: { type: 'integer', minimum: 1, maximum: 200, default: 20 } },
      },
      response: {
        200: {
          type: 'object',
          properties: { items: { type: 'array', items: Alert }, total: { type: 'integer' }, page: { type: 'integer' }, pageSize: { type: 'integer' } },
        },
      },
    },
  },
  async (request) => {
    const { page: pageNo, pageSize } = request.query as { page: number; pageSize: number };
    const total = count.get() as number;
    const offset = (pageNo - 1) * pageSize;
    return { items: offset < total ? page.all(pageSize, offset) : [], total, page: pageNo, pageSize };
  },
);

const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url: `${url}/api/alerts?page=1&pageSize=20` })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
});
