// Structure (issue 24): drizzle for every query but the energy interval blobs and the report and analysis
// aggregates. Raw statements (`sqlite.prepare('…')`, `sqlite.exec('…')`) are allowed in those folders; elsewhere a
// file may keep at most the ones it has today and a new file has none. Converting one to drizzle lowers its number here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const RAW = /\.(?:prepare|exec)\(\s*[`'"]/g;

/** The interval store, the figures and the aggregates built on them read and write encoded blobs with hand-tuned SQL. */
const RAW_ALLOWED = ['src/energy/', 'src/reports/', 'src/exports/', 'src/analysis/'];

/** The raw statements left elsewhere: a ratchet, never to grow. */
const LEFT = new Map<string, number>([
  ['src/alarms/notifier.ts', 2],
  ['src/alerts/service.ts', 1],
  ['src/auth/loginThrottle.ts', 6],
  ['src/auth/refreshTokens.ts', 8],
  ['src/auth/service.ts', 1],
  ['src/auth/signingKeys.ts', 4],
  ['src/backup/archive.ts', 3],
  ['src/backup/schedule.ts', 5],
  ['src/backup/service.ts', 4],
  ['src/dashboard/service.ts', 5],
  ['src/db/storageWatch.ts', 1],
  ['src/db/kept.ts', 2],
  ['src/health/routes.ts', 1],
  ['src/iot/gatewayToken.ts', 2],
  ['src/mail/siteMail.ts', 1],
  ['src/metrics/service.ts', 1],
  ['src/models/service.ts', 1],
  ['src/oauth/service.ts', 6],
  ['src/overview/service.ts', 3],
  ['src/uploads/avatarStore.ts', 2],
  ['src/wallboard/service.ts', 3],
]);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

test('no raw SQL statement outside the energy store, reports, exports and analysis beyond those left from before', () => {
  const grown: string[] = [];
  for (const file of sources('src')) {
    const name = file.split(path.sep).join('/');
    if (RAW_ALLOWED.some((folder) => name.startsWith(folder))) continue;
    const count = fs.readFileSync(file, 'utf8').match(RAW)?.length ?? 0;
    const left = LEFT.get(name) ?? 0;
    if (count > left) grown.push(`${name}: ${count} raw statements, at most ${left} (write new queries with drizzle: db.orm)`);
  }
  assert.deepEqual(grown, []);
});

test('the pattern finds raw statements and leaves drizzle alone', () => {
  const sample = 'db.sqlite.prepare(\'SELECT 1\'); sqlite.exec(`PRAGMA x`); orm.select().from(users).prepare(); db.sqlite.prepare(\n  "SELECT 2");';
  assert.equal(sample.match(RAW)?.length, 3);
});
