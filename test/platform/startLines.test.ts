// What a person reads at start: unknown EMS_* variables named with the closest known one, the first-start password on a line of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { levenshtein, loadConfig, settingNames, unknownSettings } from '../../src/platform/config.ts';
import { TOOL_SETTINGS } from '../../src/platform/toolSettings.ts';
import { tempDir } from '../helpers/server.ts';
import { spawnService } from '../helpers/serviceProcess.ts';

test('the known names are every EMS_* name config.ts reads', () => {
  const source = fs.readFileSync(new URL('../../src/platform/config.ts', import.meta.url), 'utf8');
  const named = new Set(source.match(/'EMS_[A-Z0-9_]+'|\.EMS_[A-Z0-9_]+/g)!.map((name) => name.replace(/^[.']|'$/g, '')));
  assert.ok(named.size > 30);
  assert.deepEqual(settingNames(), [...named].sort());
});

test('an unknown EMS_* variable is named with the closest known name; known ones and other variables are not', () => {
  assert.equal(levenshtein('EMS_PROT', 'EMS_PORT'), 2);
  assert.equal(levenshtein('', 'abc'), 3);
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  const env = { EMS_PROT: '46104', EMS_SMTP_ULR: 'smtp://mail.lan', EMS_DATA_DIRR: '/x', EMS_PORT: '3000', PATH: '/bin', EMSX: '1' };
  assert.deepEqual(unknownSettings(env), [
    { name: 'EMS_DATA_DIRR', closest: 'EMS_DATA_DIR' },
    { name: 'EMS_PROT', closest: 'EMS_PORT' },
    { name: 'EMS_SMTP_ULR', closest: 'EMS_SMTP_URL' },
  ]);
  assert.deepEqual(unknownSettings({ EMS_OAUTH_GITHUB_TOKEN_URL: 'https://gh.lan/token', EMS_OAUTH_OIDC_NAME: 'SSO' }), []);
  // The installer's and the release tools' own variables are no typo (CI exports EMS_RUNTIME_CACHE around the tests).
  assert.deepEqual(unknownSettings({ EMS_RUNTIME_CACHE: '/var/cache/ems-runtime', EMS_INSTALL_HEALTH_WAIT_SEC: '30' }), []);
  // Reading every setting on every start: a GitHub URL is checked even without a client id.
  assert.throws(() => loadConfig({ EMS_OAUTH_GITHUB_TOKEN_URL: 'nope' }), /EMS_OAUTH_GITHUB_TOKEN_URL/);
});

test('the service warns about each unknown variable and prints the first-start password on a line of its own', async (t) => {
  const dataDir = tempDir();
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const service = await spawnService(dataDir, { EMS_PROT: '46104', EMS_SMTP_ULR: 'smtp://mail.lan' });
  t.after(() => service.child.kill('SIGKILL'));
  const warnings = service.lines().filter((line) => line.variable !== undefined);
  assert.deepEqual(
    warnings.map((line) => [line.level, line.msg]),
    [
      ['warn', 'unknown setting EMS_PROT is ignored (did you mean EMS_PORT?)'],
      ['warn', 'unknown setting EMS_SMTP_ULR is ignored (did you mean EMS_SMTP_URL?)'],
    ],
  );
  const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
  const human = service
    .stderr()
    .split('\n')
    .filter((line) => line.includes(password));
  assert.deepEqual(human, [
    `ems: *** FIRST SIGN-IN: user admin, password ${password} (also in ${path.join(dataDir, 'initial-admin-password')}; change it after signing in) ***`,
  ]);
  assert.equal(service.lines().filter((line) => line.initialPassword === password).length, 1, 'still in the JSON stream');
});

test('the tool settings are exactly the EMS_* names the installer and release tools read that the service does not', () => {
  const dir = path.join(import.meta.dirname, '..', '..', 'installer');
  const read = new Set<string>();
  for (const file of fs.readdirSync(dir)) {
    if (!/\.(sh|mjs)$/.test(file)) continue;
    for (const match of fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/\bEMS_[A-Z0-9_]+/g)) read.add(match[0]);
  }
  const service = settingNames();
  assert.deepEqual([...read].filter((name) => !service.includes(name)).sort(), [...TOOL_SETTINGS].sort());
});
