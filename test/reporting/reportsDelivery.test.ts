// Done-when of scheduled reports: a fresh service process with a pdf plan on `* * * * *` mails a correct PDF + CSV at its
// next minute, carrying the metered figures the energy summary answers for the same week.
// The service runs under libfaketime: once the plan is made, its wall clock is stepped ahead to just before that next
// minute (as an NTP correction would; its timers keep the real monotonic clock), so the test does not sit idle for up to
// a minute of real time (39 s on average in CI) waiting for the boundary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runTool } from '../helpers/tools.ts';
import fs from 'node:fs';
import path from 'node:path';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { formatCell } from '../../src/reporting/reports/renderCsv.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { attachmentsOf } from '../helpers/mailParts.ts';
import { signInAdmin, spawnService } from '../helpers/serviceProcess.ts';
import { eventually, tempDir } from '../helpers/server.ts';
import { startMailCatcher } from '../helpers/smtp.ts';
import { LOOPS_AS_INSTALLED } from '../helpers/testEnv.ts';

const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((file) => fs.existsSync(file));
/** How far before the plan's minute the service's clock is set: the scheduler wakes at least every 10 s and then runs it. */
const LEAD_MS = 2_000;

test('a pdf plan on * * * * * delivers its PDF and CSV at the next minute after a fresh start', { timeout: 360_000 }, async (t) => {
  assert.ok(LIBFAKETIME, 'libfaketime is installed (test/setup/systemPackages.sh)');
  const mail = await startMailCatcher();
  const dataDir = tempDir();
  const clockDir = tempDir('ems-test-clock-');
  const clockFile = path.join(clockDir, 'faketime');
  fs.writeFileSync(clockFile, '+0s\n');
  // Registered before the service starts: a service that fails to start must not leave the catcher listening (the
  // open server kept the whole test run from ending).
  t.after(async () => {
    await mail.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(clockDir, { recursive: true, force: true });
  });
  // Collecting, as installed: the report's figures are the simulated building's week the start backfills.
  const service = await spawnService(dataDir, {
    ...LOOPS_AS_INSTALLED,
    EMS_SMTP_URL: mail.url,
    EMS_REPORT_MIN_INTERVAL: '1m',
    LD_PRELOAD: LIBFAKETIME!,
    FAKETIME_TIMESTAMP_FILE: clockFile,
    FAKETIME_CACHE_DURATION: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  });
  try {
    const token = await signInAdmin(service.url, dataDir);
    // The fresh service meters the simulated building and backfills 7 days at start: the report carries those figures.

    const created = await fetch(`${service.url}/api/reports/plans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Every minute', templateId: 'weekly-energy', cron: '* * * * *', recipients: ['energy@example.test'] }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const plan = (await created.json()) as { format: string; updatedAt: string };
    assert.equal(plan.format, 'pdf');
    // The plan's next time: the first minute boundary after its last edit, on the service's clock (still the real one).
    const due = (Math.floor(Date.parse(plan.updatedAt) / 60_000) + 1) * 60_000;
    // The report covers the week before the day it runs on: the day of that minute (it runs within seconds of it).
    const today = siteDay('UTC', new Date(due));
    // Stepped ahead to LEAD_MS before it (libfaketime reads the file within a second). Under an outer faketime
    // (FAKETIME set for the whole test, e.g. a check at 23:54) that setting wins over the file: no step, the plan waits
    // for its minute in real time as before.
    const step = process.env.FAKETIME === undefined ? Math.max(0, due - LEAD_MS - Date.now()) : 0;
    if (step > 0) fs.writeFileSync(clockFile, `+${(step / 1000).toFixed(3)}s\n`);

    // The wait is generous for a busy box, and how long it took is reported, not asserted.
    const planned = Date.now();
    const delivered = await eventually(async () => mail.messages.find((m) => m.to.includes('energy@example.test')), 'the report mail', 240_000);
    const run = await service.waitForLog('report delivered');
    t.diagnostic(
      `report mail ${((Date.now() - planned) / 1000).toFixed(1)} s after the plan was created (its clock stepped ` +
        `${(step / 1000).toFixed(1)} s ahead; the run took ${run.durationMs} ms, trigger ${run.trigger})`,
    );
    const parts = attachmentsOf(delivered.raw);
    const pdf = parts.find((p) => p.contentType === 'application/pdf');
    const csv = parts.find((p) => p.contentType.startsWith('text/csv'));
    assert.ok(pdf && csv, `PDF and CSV attached: ${parts.map((p) => p.filename)}`);
    const file = path.join(dataDir, 'tmp', 'delivered.pdf');
    fs.writeFileSync(file, pdf.content);
    const text = await runTool('pdftotext', ['-layout', file, '-']);
    const summary = (await (
      await fetch(`${service.url}/api/energy/summary?from=${addDays(today, -7)}&to=${today}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { totalKwh: number };
    // The backfill reaches 7 × 24 h back from the start, so the first day of the span is partial and the sum shrinks
    // through the day (19,960 kWh at 21:13 UTC, over 20,000 earlier): more than 5 whole days of the building is the floor.
    assert.ok(summary.totalKwh > 15_000, `a week of the simulated building: ${summary.totalKwh} kWh`);
    const totalKwh = formatCell(summary.totalKwh);
    // The PDF in the site's locale (en-US, UTC by default); the CSV keeps the API's plain numbers.
    const site = new SiteFormat({ locale: 'en-US', timezone: 'UTC', currency: 'EUR' });
    assert.ok(text.includes(site.kwh(summary.totalKwh)), text);
    assert.ok(text.includes(`Period: ${site.date(addDays(today, -7))} to ${site.date(addDays(today, -1))}`), text);
    assert.match(csv.content.toString(), new RegExp(`^totals\\r\\nkwh,cost,carbon_kg\\r\\n${totalKwh},`, 'm'));
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
  }
});
