// HTTPS served directly: EMS_TLS_CERT/EMS_TLS_KEY, a client that trusts only the generated certificate, reload on
// SIGHUP without dropping the process or its open connections, bad files refused at start (exit 2) and on reload.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { readTlsCredentials, StartupError } from '../../src/platform/http/listener.ts';
import { selfSignedCertificate } from '../helpers/certificate.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/server.ts';
import { cleanEnv, repoRoot, spawnService, trackChild, type ServiceProcess } from '../helpers/serviceProcess.ts';

type Pair = { cert: string; key: string };

/** A self-signed certificate for 127.0.0.1 and localhost, as PEM text. */
function makeCertificate(dir: string, name: string): Pair {
  const { certFile, keyFile } = selfSignedCertificate(dir, name, 'IP:127.0.0.1,DNS:localhost');
  return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/** GET over HTTPS trusting only `ca`; resolves with the status and the fingerprint of the certificate served. */
function get(url: string, ca: string, agent: https.Agent | false = false): Promise<{ status: number; served: string; socket: TLSSocket }> {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { ca, agent }, (response) => {
      const socket = response.socket as TLSSocket;
      const served = socket.getPeerCertificate().fingerprint256;
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, served, socket }));
    });
    request.on('error', reject);
  });
}

function runMain(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Tracked: killed with the test file if a start that should fail does not.
    const child = trackChild(
      spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'main.ts')], {
        cwd: repoRoot,
        env: cleanEnv({ EMS_PORT: '0', ...env }),
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a service serving HTTPS', () => {
  const dir = tempDir('ems-tls-');
  const dataDir = path.join(dir, 'data');
  const certFile = path.join(dir, 'live', 'ems.crt');
  const keyFile = path.join(dir, 'live', 'ems.key');
  let first: Pair;
  let second: Pair;
  let service: ServiceProcess;

  before(async () => {
    first = makeCertificate(dir, 'ems-first');
    second = makeCertificate(dir, 'ems-second');
    fs.mkdirSync(path.dirname(certFile));
    fs.writeFileSync(certFile, first.cert);
    fs.writeFileSync(keyFile, first.key, { mode: 0o600 });
    service = await spawnService(dataDir, { EMS_TLS_CERT: certFile, EMS_TLS_KEY: keyFile });
  });

  after(async () => {
    if (service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers over TLS with the configured certificate, to a client that trusts it', async () => {
    assert.match(service.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const started = await service.waitForLog('EMS started');
    assert.equal((started.tls as { subject: string }).subject, 'CN=ems-first');
    const health = await get(`${service.url}/api/health`, first.cert);
    assert.equal(health.status, 200);
    assert.equal(health.served, fingerprint(first.cert));
    await assert.rejects(
      get(`${service.url}/api/health`, second.cert),
      /self.signed|unable to verify|certificate/i,
      'a client trusting another certificate refuses it',
    );
  });

  test('plain http:// on the HTTPS port: 400 naming the https:// URL, not a reset; TLS on the same port still works after it', async () => {
    const port = new URL(service.url).port;
    const plain = await new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${port}/api/health?x=1`, (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body, type: String(response.headers['content-type']) }));
        })
        .on('error', reject);
    });
    assert.equal(plain.status, 400);
    assert.match(plain.type, /^application\/json/);
    assert.deepEqual(JSON.parse(plain.body), { error: `This port speaks HTTPS: use https://127.0.0.1:${port}/api/health?x=1`, code: 'VALIDATION' });
    assert.equal((await get(`${service.url}/api/health`, first.cert)).status, 200);

    // emsctl without the settings file asks over http:// and is told to pass --env-file.
    const status = await runCli(['--data-dir', dataDir, 'status'], { env: { EMS_PORT: port, EMS_HOST: '127.0.0.1' } });
    assert.equal(status.code, 3, status.stderr);
    assert.match(status.stdout, /NOT ANSWERING: .*gave HTTP 400: This port speaks HTTPS.*pass --env-file/);
    assert.equal(status.stdout.split(`http://127.0.0.1:${port}/api/health`).length - 1, 1, `the URL asked is said once: ${status.stdout}`);
  });

  test('SIGHUP with a new certificate: the new one is served, the process and open connections stay', async () => {
    const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1, ca: first.cert });
    try {
      const before = await get(`${service.url}/api/health`, first.cert, keepAlive);
      assert.equal(before.served, fingerprint(first.cert));

      fs.writeFileSync(certFile, second.cert);
      fs.writeFileSync(keyFile, second.key);
      const reloads = service.lines().filter((line) => line.msg === 'TLS certificate reloaded').length;
      service.child.kill('SIGHUP');
      for (;;) {
        const done = service.lines().filter((line) => line.msg === 'TLS certificate reloaded');
        if (done.length > reloads) {
          assert.equal(done.at(-1)!.subject, 'CN=ems-second');
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }

      const fresh = await get(`${service.url}/api/health`, second.cert);
      assert.equal(fresh.status, 200);
      assert.equal(fresh.served, fingerprint(second.cert));
      await assert.rejects(get(`${service.url}/api/health`, first.cert), /self.signed|unable to verify|certificate/i);

      const kept = await get(`${service.url}/api/health`, first.cert, keepAlive);
      assert.equal(kept.status, 200);
      assert.equal(kept.socket, before.socket, 'the connection opened before the reload is still served');
      assert.equal(service.child.exitCode, null);
    } finally {
      keepAlive.destroy();
    }
  });

  test('SIGHUP with a broken certificate: one error line, the previous certificate stays in service', async () => {
    fs.writeFileSync(certFile, 'not a certificate\n');
    service.child.kill('SIGHUP');
    const refused = await service.waitForLog('TLS certificate not reloaded: the previous one is still served');
    assert.equal(refused.level, 'error');
    assert.match(String(refused.problem), /^EMS_TLS_CERT: .*ems\.crt holds no PEM certificate$/);
    const still = await get(`${service.url}/api/health`, second.cert);
    assert.deepEqual([still.status, still.served], [200, fingerprint(second.cert)]);
    fs.writeFileSync(certFile, second.cert);
  });
});

describe('certificate files that cannot be served', () => {
  const dir = tempDir('ems-tls-bad-');
  let a: Pair;
  let b: Pair;
  const file = (name: string, content: string) => {
    const target = path.join(dir, name);
    fs.writeFileSync(target, content);
    return target;
  };

  before(() => {
    a = makeCertificate(dir, 'a');
    b = makeCertificate(dir, 'b');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('both variables or neither', () => {
    assert.throws(
      () => loadConfig({ EMS_TLS_CERT: '/etc/ems/tls/ems.crt' }),
      (error: unknown) => error instanceof ConfigError && error.message === 'EMS_TLS_KEY: must be set together with EMS_TLS_CERT',
    );
    assert.throws(
      () => loadConfig({ EMS_TLS_KEY: '/etc/ems/tls/ems.key' }),
      (error: unknown) => error instanceof ConfigError && error.message.startsWith('EMS_TLS_CERT:'),
    );
    assert.equal(loadConfig({}).tls, null);
    assert.equal(loadConfig({ EMS_TLS_CERT: 'c.pem', EMS_TLS_KEY: 'k.pem' }).publicUrl, 'https://localhost:3000');
  });

  test('each bad file is named: missing, not PEM, a key of another certificate, an encrypted key', () => {
    const certA = file('a.pem', a.cert);
    const keyA = file('a-key.pem', a.key);
    const cases: Array<[string, string, RegExp]> = [
      [path.join(dir, 'missing.pem'), keyA, /^EMS_TLS_CERT: cannot read .*missing\.pem \(ENOENT\)$/],
      [certA, path.join(dir, 'missing.key'), /^EMS_TLS_KEY: cannot read .*missing\.key \(ENOENT\)$/],
      [file('junk.pem', 'hello\n'), keyA, /^EMS_TLS_CERT: .*junk\.pem holds no PEM certificate$/],
      [certA, file('junk.key', 'hello\n'), /^EMS_TLS_KEY: .*junk\.key holds no usable PEM private key/],
      [certA, file('b-key.pem', b.key), /^EMS_TLS_KEY: .*b-key\.pem is not the key of the certificate in .*a\.pem$/],
      [
        certA,
        file('enc.key', execFileSync('openssl', ['pkey', '-aes256', '-passout', 'pass:secret'], { input: a.key }).toString()),
        /^EMS_TLS_KEY: .*enc\.key holds no usable PEM private key/,
      ],
    ];
    for (const [certFile, keyFile, expected] of cases) {
      assert.throws(
        () => readTlsCredentials({ certFile, keyFile }),
        (error: unknown) => error instanceof StartupError && expected.test(error.message),
        String(expected),
      );
    }
    const good = readTlsCredentials({ certFile: certA, keyFile: keyA });
    assert.equal(good.subject, 'CN=a');
  });

  test('the service refuses to start on a key that does not match: one line, exit 2, nothing created', async () => {
    const dataDir = path.join(dir, 'data');
    const result = await runMain({ EMS_DATA_DIR: dataDir, EMS_TLS_CERT: file('a.pem', a.cert), EMS_TLS_KEY: file('b-key.pem', b.key) });
    assert.equal(result.code, 2, result.stderr);
    const lines = result.stderr.split('\n');
    assert.equal(lines.length, 2, result.stderr);
    assert.match(lines[0], /^ems: EMS_TLS_KEY: .*b-key\.pem is not the key of the certificate in .*a\.pem$/);
    assert.equal(result.stdout, '');
    assert.equal(fs.existsSync(dataDir), false);
  });
});
