// Report building in a worker thread (issue 29): the service's runs build content and files off the request thread on
// a read-only connection, byte for byte what the same code gives in this thread; one worker at a time under 8 plans
// run at once; a worker past its memory bound fails its run with a clear error while the service keeps answering.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AlertService } from '../../src/facility/alerts/service.ts';
import { Comparisons } from '../../src/analysis/comparisons.ts';
import { DemandCharges } from '../../src/analysis/demandCharges.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { ReportContentBuilder, type TemplateKey } from '../../src/reporting/reports/content.ts';
import { siteEnergyFigures } from '../helpers/reportEnergy.ts';
import { ReportWorkers } from '../../src/reporting/reports/offThread.ts';
import { renderFiles } from '../../src/reporting/reports/renderFiles.ts';
import { ReportRunner, systemClock } from '../../src/reporting/reports/runs.ts';
import { eventually, fetchRetryingReset, startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';
import { seedYear } from '../helpers/seededYear.ts';

type Run = { id: number; status: string; error: string | null; startedAt: string; files: { name: string }[] };

describe('report building in a worker thread', () => {
  let server: TestServer;
  let admin: TestUser;

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    seedYear(server, 'UTC', { subMeters: 4, days: 60 });
  });
  after(() => server.close());

  async function createPlan(name: string, templateId: TemplateKey, format = 'pdf'): Promise<number> {
    const plan = await server.request('POST', '/api/reports/plans', {
      token: admin.accessToken,
      body: { name, templateId, format, cron: '0 6 1 * *', recipients: ['energy@example.test'] },
    });
    assert.equal(plan.status, 201, plan.text);
    return plan.body.id;
  }

  async function finished(runId: number): Promise<Run> {
    return eventually(
      async () => {
        const read = await server.request('GET', `/api/reports/runs/${runId}`, { token: admin.accessToken });
        return read.body.status === 'running' ? undefined : (read.body as Run);
      },
      `report run ${runId}`,
      120_000,
    );
  }

  async function download(runId: number, name: string): Promise<Buffer> {
    // fetchRetryingReset: a GET sent again when it met a keep-alive socket the service was closing (a busy machine;
    // test:fast at load 20 saw "fetch failed" here).
    const response = await fetchRetryingReset(`${server.url}/api/reports/runs/${runId}/files/${encodeURIComponent(name)}`, {
      headers: { authorization: `Bearer ${admin.accessToken}` },
    });
    assert.equal(response.status, 200);
    return Buffer.from(await response.arrayBuffer());
  }

  test("a run's PDF and CSV are the bytes the same content renders to in this thread", async () => {
    const { deps } = server.service;
    const sameThread = new ReportContentBuilder(
      deps.db,
      siteEnergyFigures(deps.db, deps.energy.figures),
      {
        comparisons: new Comparisons(deps.db, deps.energy.figures, deps.energy.tariffs, deps.energy.days),
        demandCharges: new DemandCharges(deps.energy.figures, deps.energy.tariffs),
      },
      () => deps.energy.figures.metered(),
      deps.energy.commodities,
    );
    for (const template of ['monthly-energy', 'weekly-energy', 'alerts-faults'] as const) {
      const planId = await createPlan(`Worker ${template}`, template);
      const started = await server.request('POST', `/api/reports/plans/${planId}/run`, { token: admin.accessToken });
      assert.equal(started.status, 202, started.text);
      const run = await finished(started.body.id);
      assert.equal(run.status, 'ok', run.error ?? '');
      const expected = await renderFiles(sameThread.build(template, `Worker ${template}`, Date.parse(run.startedAt)), 'pdf');
      assert.deepEqual(
        run.files.map((file) => file.name),
        expected.map((file) => file.filename),
      );
      for (const file of expected) {
        const got = await download(run.id, file.filename);
        assert.ok(got.length > 1000 || file.filename.endsWith('.csv'), `${file.filename}: ${got.length} bytes`);
        assert.ok(got.equals(file.content), `${template}: ${file.filename} differs from the same-thread rendering`);
      }
    }
  });

  test('8 plans run at once: every run ok, never more than one worker at a time', async () => {
    const runner = server.service.deps.reportRuns;
    const ids = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createPlan(`Parallel ${i}`, i % 2 ? 'weekly-energy' : 'alerts-faults', i % 3 ? 'pdf' : 'csv')),
    );
    const started = await Promise.all(ids.map((id) => server.request('POST', `/api/reports/plans/${id}/run`, { token: admin.accessToken })));
    for (const response of started) assert.equal(response.status, 202, response.text);
    const waitingSeen = await eventually(
      async () => {
        const stats = runner.workerStats();
        return stats && stats.running === 1 && stats.waiting > 0 ? stats.waiting : undefined;
      },
      'runs waiting for the worker',
      60_000,
    );
    assert.ok(waitingSeen >= 1);
    const runs = await Promise.all(started.map((response) => finished(response.body.id)));
    for (const run of runs) assert.equal(run.status, 'ok', run.error ?? '');
    assert.deepEqual(runner.workerStats(), { running: 0, peak: 1, waiting: 0 });
    // The service answered while they ran.
    assert.equal((await server.request('GET', '/api/health')).status, 200);
  });

  test('a worker past its memory bound fails the run with a clear error; the next run and the service are fine', async () => {
    const { deps } = server.service;
    const planId = await createPlan('Small worker', 'monthly-energy');
    const workers = new ReportWorkers(deps.db.path, 8);
    const tight = new ReportRunner({
      db: deps.db,
      audit: deps.audit,
      mailer: deps.mailer,
      logger: createLogger('silent'),
      directory: tempDir('ems-report-worker-'),
      content: new ReportContentBuilder(deps.db, siteEnergyFigures(deps.db, deps.energy.figures)),
      workers,
      clock: systemClock,
      mailRetryDelaysMs: [],
      keepFilesPerPlan: 5,
      alerts: new AlertService(deps.db, deps.audit),
    });
    const failed = await tight.start(planId, 'manual', null).finished;
    await workers.close();
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error, 'could not build the report: the report worker ran out of memory (its limit is 8 MiB)');
    assert.deepEqual(failed.files, []);
    assert.equal((await server.request('GET', '/api/health')).status, 200);
    const started = await server.request('POST', `/api/reports/plans/${planId}/run`, { token: admin.accessToken });
    assert.equal(started.status, 202, started.text);
    assert.equal((await finished(started.body.id)).status, 'ok');
  });
});
