// Site settings nobody has confirmed are said (emsctl status, /api/health), and emsctl site show/set changes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { runCli } from '../helpers/cli.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';

test('defaults are named in /api/health and emsctl status until set; emsctl site set checks like the API', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args]);
  const health = async () => (await server.request('GET', '/api/health')).body.site;

  assert.deepEqual(await health(), { defaults: ['siteName', 'timezone', 'currency'] });
  const [status, statusJson, shown] = await Promise.all([cli('status'), cli('--json', 'status'), cli('--json', 'site', 'show')]);
  assert.match(
    status.stdout,
    /^site +"EMS", UTC, EUR: STILL THE DEFAULTS \(siteName, timezone, currency\): emsctl site set --name … --timezone … --currency …$/m,
  );
  assert.deepEqual(JSON.parse(statusJson.stdout).site, { siteName: 'EMS', timezone: 'UTC', currency: 'EUR', defaults: ['siteName', 'timezone', 'currency'] });
  assert.equal(JSON.parse(shown.stdout).timezone, 'UTC');

  const usage = await Promise.all([
    cli('site', 'set'),
    cli('site', 'set', '--currency', 'eur'),
    cli('site', 'set', '--timezone', 'Mars/Olympus_Mons'),
    cli('site', 'set', '--name', ''),
    cli('site', 'set', '--currency', 'XYZ'),
  ]);
  assert.deepEqual(
    usage.map((result) => result.code),
    [2, 2, 2, 2, 2],
    usage.map((result) => result.stderr).join(''),
  );
  assert.match(usage[2].stderr, /--timezone is not a known IANA time zone/);

  const set = await cli('site', 'set', '--name', 'HQ Berlin', '--currency', 'CHF');
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^site settings changed:\nname +HQ Berlin\ntime zone UTC\ncurrency +CHF\nstill the defaults: timezone/);
  assert.deepEqual(await health(), { defaults: ['timezone'] });
  const configs = await server.request('GET', '/api/configs', { token: (await server.createUser({ role: 'admin' })).accessToken });
  assert.equal(configs.body.siteName, 'HQ Berlin');

  // A new zone re-keys the stored energy while collection waits: the running service does that, not emsctl.
  const zone = await cli('site', 'set', '--timezone', 'Europe/Berlin');
  assert.equal(zone.code, 1);
  assert.match(zone.stderr, /the service is running \(pid \d+\): change the time zone with PUT \/api\/configs, or stop it first/);
  assert.deepEqual(await health(), { defaults: ['timezone'] });
});

test('with the service stopped, emsctl site set --timezone changes the zone the next start uses', async (t) => {
  const dataDir = tempDir();
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer({ EMS_DATA_DIR: dataDir });
  await first.service.close();
  const set = await runCli(['--data-dir', dataDir, '--json', 'site', 'set', '--timezone', 'Europe/Berlin']);
  assert.equal(set.code, 0, set.stderr);
  assert.deepEqual(JSON.parse(set.stdout).defaults, ['siteName', 'currency']);
  const second = await startTestServer({ EMS_DATA_DIR: dataDir });
  t.after(() => second.close());
  assert.deepEqual((await second.request('GET', '/api/health')).body.site, { defaults: ['siteName', 'currency'] });
});

test('a default is what nobody confirmed: a euro site in UTC that says so is set up', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  const admin = await server.createUser({ role: 'admin' });
  const health = async () => (await server.request('GET', '/api/health')).body.site;
  // The first-run screen sends all three, two of them unchanged: only the name changes value.
  const put = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { siteName: 'Campus Nord', currency: 'EUR' } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(await health(), { defaults: ['timezone'] });
  // Nothing changes value here, and still the time zone is now confirmed.
  assert.equal((await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: 'UTC' } })).status, 200);
  assert.deepEqual(await health(), { defaults: [] });
  const status = await runCli(['--data-dir', server.dataDir, '--json', 'status']);
  assert.deepEqual(JSON.parse(status.stdout).site, { siteName: 'Campus Nord', timezone: 'UTC', currency: 'EUR', defaults: [] });
});
