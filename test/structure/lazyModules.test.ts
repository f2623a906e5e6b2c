// Start-up leaves the heavy packages a given appliance may never use unloaded (resident memory of an idle service):
// pdfkit until a PDF report, nodemailer until a mail, koa-body until a form or compressed body, openid-client until a
// provider sign-in. Each is loaded on its first use (their own tests cover that path).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helpers/server.ts';
import { repoRoot, spawnService } from '../helpers/serviceProcess.ts';
import { LOOPS_AS_INSTALLED } from '../helpers/testEnv.ts';

test('start-up and a request load none of pdfkit, nodemailer, koa-body, openid-client', async () => {
  const dataDir = tempDir();
  const trace = path.join(dataDir, 'packages.txt');
  // An appliance's start as installed: collecting and polling the gateway's alarms (with a mail server set).
  const service = await spawnService(
    dataDir,
    {
      ...LOOPS_AS_INSTALLED,
      PACKAGE_TRACE_FILE: trace,
      EMS_SMTP_URL: 'smtp://127.0.0.1:9',
      EMS_OAUTH_GITHUB_CLIENT_ID: 'id',
      EMS_OAUTH_GITHUB_CLIENT_SECRET: 'secret',
    },
    ['--import', 'tsx', '--import', path.join(repoRoot, 'test', 'helpers', 'packageTrace.mjs'), path.join(repoRoot, 'src', 'main.ts')],
  );
  try {
    assert.equal((await fetch(`${service.url}/api/health`)).status, 200);
    const loaded = new Set(fs.readFileSync(trace, 'utf8').split('\n'));
    assert.ok(loaded.has('koa') && loaded.has('better-sqlite3'), 'the trace sees what start-up loads');
    for (const name of ['pdfkit', 'nodemailer', 'koa-body', 'openid-client']) assert.equal(loaded.has(name), false, `${name} loaded at start-up`);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
