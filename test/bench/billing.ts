// Billing-run benchmark: the main incomer and BENCH_METERS − 1 tenant sub-meters (one tenant each) × a month of
// intervals written through the real interval store; a billing run of the month (one transaction: every interval read,
// priced and banded, statements written) against the floor of reading the same day rows alone, in the same process on
// the same data. Prints times and the ratio; nothing is asserted. `npm run bench:billing`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildAnalysis } from '../../src/analysis/module.ts';
import { buildBilling } from '../../src/billing/module.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { daysBetween } from '../../src/platform/time/calendar.ts';
import { createSiteMeters, openSeeding, seedDays } from './seeding.ts';

const METERS = Number(process.env.BENCH_METERS ?? 200);
const FROM = '2026-01-01';
const TO = '2026-02-01';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const actor = { id: null, username: 'bench' };

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-billing-'));
try {
  const seeded = openSeeding(dataDir);
  const { db, energy } = seeded;
  const ids = createSiteMeters(seeded, METERS);
  const seededAt = performance.now();
  seedDays(seeded, ids, FROM, TO);
  console.log(`seeded ${METERS} meters × ${daysBetween(FROM, TO).length} days in ${((performance.now() - seededAt) / 1000).toFixed(1)} s`);
  const audit = new AuditLog(db);
  // No gateway and no alert intake: the billing run reads neither (only the measures' baselines ask for temperatures).
  const analysis = buildAnalysis({
    db,
    audit,
    energy,
    days: energy.days,
    meters: energy.meters,
    tariffs: energy.tariffs,
    timezone: energy.timezone,
    iot: { history: async () => Promise.reject(new Error('no gateway in the bench')) },
    alerts: { fromGatewayAlarm: () => 'unchanged' as const },
    logger: createLogger('silent'),
  });
  const billing = buildBilling(db, audit, energy, analysis);
  for (const meterId of ids.slice(1)) {
    const tenant = billing.statements.createTenant({ name: `Tenant ${meterId}` }, actor);
    billing.statements.putAllocation(meterId, { method: 'percent', shares: [{ tenantId: tenant.id, value: 100 }] }, actor);
  }
  const period = billing.statements.createPeriod({ from: FROM, to: TO }, actor);

  const floor = () => {
    let sum = 0;
    for (const meterId of ids) for (const day of daysBetween(FROM, TO)) sum += energy.store.load(meterId, day).kwh[0];
    return sum;
  };
  const time = async (task: () => unknown) => {
    const started = performance.now();
    await task();
    return performance.now() - started;
  };
  const floors: number[] = [];
  const runs: number[] = [];
  let statements = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    floors.push(await time(floor));
    runs.push(
      await time(async () => {
        statements = (await billing.statements.runPeriod(period.id, actor)).statements.length;
      }),
    );
  }
  // The longest the event loop waited during one more run: what a request arriving meanwhile would wait.
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await billing.statements.runPeriod(period.id, actor);
  clearInterval(ticker);
  const best = (values: number[]) => Math.min(...values);
  console.log(`read the day rows alone (floor): ${best(floors).toFixed(0)} ms`);
  console.log(`billing run, ${statements} statements:   ${best(runs).toFixed(0)} ms  (${(best(runs) / best(floors)).toFixed(1)} × the floor)`);
  console.log(`longest event-loop wait during a run: ${longest.toFixed(0)} ms`);
  console.log(`per meter-day: ${((best(runs) * 1000) / (METERS * daysBetween(FROM, TO).length)).toFixed(0)} µs`);
  seeded.close();
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
