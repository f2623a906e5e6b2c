// The fleet's settings for a read replica, checked at start: a bad EMS_FLEET_READ_DATABASE_URL stops the fleet with one
// line naming the variable; the main process says so on stderr and exits 2 before touching any database.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { FleetConfigError, loadFleetConfig } from '../../src/fleet/config.ts';
import { repoRoot } from '../helpers/serviceProcess.ts';

const primary = 'postgresql://ems@127.0.0.1:5432/ems_fleet';

test('EMS_FLEET_READ_DATABASE_URL: unset reads the primary, set names the replica and its pool', () => {
  const plain = loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary });
  assert.equal(plain.readDatabaseUrl, null);
  const replica = loadFleetConfig({
    EMS_FLEET_DATABASE_URL: primary,
    EMS_FLEET_READ_DATABASE_URL: 'postgresql://ems@10.0.0.2/ems_fleet',
    EMS_FLEET_READ_POOL: '6',
  });
  assert.equal(replica.readDatabaseUrl, 'postgresql://ems@10.0.0.2/ems_fleet');
  assert.equal(replica.readPoolSize, 6);
  assert.equal(replica.poolSize, replica.maxConcurrentIngests + 4);
});

test('EMS_FLEET_KEEP_RAW_MONTHS: unset keeps every month, a whole number of months from 1 to 1200, anything else refused naming it', () => {
  assert.equal(loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary }).keepRawMonths, null);
  assert.equal(loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary, EMS_FLEET_KEEP_RAW_MONTHS: '25' }).keepRawMonths, 25);
  for (const bad of ['0', '1201', '2.5', 'ten']) {
    assert.throws(
      () => loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary, EMS_FLEET_KEEP_RAW_MONTHS: bad }),
      (error: Error) => error instanceof FleetConfigError && error.message.startsWith('EMS_FLEET_KEEP_RAW_MONTHS must be an integer from 1 to 1200'),
      bad,
    );
  }
});

test('a bad replica URL or pool size is refused naming the variable', () => {
  for (const [env, name] of [
    [{ EMS_FLEET_READ_DATABASE_URL: 'mysql://replica/ems' }, 'EMS_FLEET_READ_DATABASE_URL'],
    [{ EMS_FLEET_READ_DATABASE_URL: 'postgresql://[bad' }, 'EMS_FLEET_READ_DATABASE_URL'],
    [{ EMS_FLEET_READ_POOL: '0' }, 'EMS_FLEET_READ_POOL'],
  ] as const) {
    assert.throws(
      () => loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary, ...env }),
      (error: Error) => error instanceof FleetConfigError && error.message.startsWith(name),
    );
  }
});

test('the fleet service refuses to start on a bad replica URL, with one line naming it', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'fleet', 'main.ts')], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, EMS_FLEET_DATABASE_URL: primary, EMS_FLEET_READ_DATABASE_URL: 'replica.example:5432' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(result.status, 2, result.stderr);
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, /EMS_FLEET_READ_DATABASE_URL must start with postgresql:\/\//);
});

test('single sign-on: off without an issuer; with one, the client and the public URL are required, each named', () => {
  assert.equal(loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary }).sso, null);
  const sso = {
    EMS_FLEET_OIDC_ISSUER: 'https://login.corp.example/realms/staff',
    EMS_FLEET_OIDC_CLIENT_ID: 'ems-fleet',
    EMS_FLEET_OIDC_CLIENT_SECRET: 'secret',
    EMS_FLEET_PUBLIC_URL: 'https://fleet.corp.example',
  };
  assert.deepEqual(loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary, ...sso }).sso, {
    issuer: sso.EMS_FLEET_OIDC_ISSUER,
    clientId: 'ems-fleet',
    clientSecret: 'secret',
    displayName: 'Single sign-on',
    publicUrl: 'https://fleet.corp.example',
  });
  for (const [change, name] of [
    [{ EMS_FLEET_OIDC_ISSUER: 'not a url' }, 'EMS_FLEET_OIDC_ISSUER'],
    [{ EMS_FLEET_OIDC_CLIENT_SECRET: '' }, 'EMS_FLEET_OIDC_CLIENT_ID'],
    [{ EMS_FLEET_PUBLIC_URL: '' }, 'EMS_FLEET_PUBLIC_URL'],
    [{ EMS_FLEET_PUBLIC_URL: 'fleet.corp.example' }, 'EMS_FLEET_PUBLIC_URL'],
  ] as const) {
    assert.throws(
      () => loadFleetConfig({ EMS_FLEET_DATABASE_URL: primary, ...sso, ...change }),
      (error: Error) => error instanceof FleetConfigError && error.message.startsWith(name),
      name,
    );
  }
});
