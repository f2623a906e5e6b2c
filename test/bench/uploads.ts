// Upload/download benchmark: a real service in a child process, 100 MiB each way, the server's peak RSS growth per
// direction (sampled from /proc/<pid>/status), and upload throughput as a ratio of writing the same bytes with fs.
// Prints figures only; it asserts correctness (status, SHA-256), never a time.
// Run: node --import tsx test/bench/uploads.ts   (BENCH_UPLOAD_MIB=100, BENCH_ROUNDS=3, BENCH_SERVER_NODE_ARGS)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { generatedBytes, streamUpload } from '../helpers/uploads.ts';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_UPLOAD_MIB ?? 100) * MiB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLE_MS = 5;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!match) throw new Error('no VmRSS in /proc status');
  return Number(match[1]) * 1024;
}

/** CPU time the process has used (user + system), in ms: a figure the machine's load does not distort much. */
function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of /proc/<pid>/stat (utime, stime) are at 11 and 12 after the ") " of the command name; 100 ticks/s on Linux.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs `work` while sampling the server's RSS; growth = peak during the work minus the RSS just before it. */
async function withRssSampling<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; baseline: number; peak: number; ms: number; cpuMs: number }> {
  const baseline = rssOf(pid);
  const cpuBefore = cpuMsOf(pid);
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, SAMPLE_MS);
  const started = performance.now();
  try {
    const result = await work();
    const ms = performance.now() - started;
    peak = Math.max(peak, rssOf(pid));
    return { result, baseline, peak, ms, cpuMs: cpuMsOf(pid) - cpuBefore };
  } finally {
    clearInterval(timer);
  }
}

async function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server side.
  const extraArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extraArgs, '--import', 'tsx', path.join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, EMS_DATA_DIR: dataDir, EMS_PORT: '0', EMS_HOST: '127.0.0.1', EMS_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`service exited with ${code} before listening`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (!line.includes('"EMS started"')) continue;
        resolve((JSON.parse(line) as { url: string }).url);
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
  });
  child.stdout!.resume();
  return { child, url };
}

async function signIn(url: string, dataDir: string): Promise<string> {
  const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  if (response.status !== 200) throw new Error(`login failed: ${response.status}`);
  return ((await response.json()) as { accessToken: string }).accessToken;
}

/**
 * The same bytes from the same generator, written with fs into the same file system and fsynced on close,
 * as the upload path does before it writes the row: the ceiling for an upload.
 */
async function writeWithFs(file: string, block: Buffer): Promise<{ ms: number }> {
  const started = performance.now();
  const out = fs.createWriteStream(file, { flush: true });
  for (const chunk of generatedBytes(SIZE, block)) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return { ms: performance.now() - started };
}

/** Hashes what the generator will produce, outside any timed phase. */
function expectedSha256(block: Buffer): string {
  const hash = createHash('sha256');
  for (const chunk of generatedBytes(SIZE, block)) hash.update(chunk);
  return hash.digest('hex');
}

function download(url: string, pathname: string, token: string): Promise<{ status: number; sha256: string; size: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}${pathname}`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
        const hash = createHash('sha256');
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          size += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, sha256: hash.digest('hex'), size }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function referenceWrite(dataDir: string, block: Buffer): Promise<{ ms: number }> {
  settleDisk();
  const file = path.join(dataDir, 'fs-reference.bin');
  const written = await writeWithFs(file, block);
  fs.rmSync(file);
  return written;
}

const mib = (bytes: number) => (bytes / MiB).toFixed(1);
const rate = (ms: number) => SIZE / MiB / (ms / 1000);

/**
 * Flushes dirty pages before each timed write, so neither the fs reference nor the upload pays for the
 * writeback of the one before it (without this the page-cache throttle swings either figure by 5x).
 */
function settleDisk(): void {
  execFileSync('sync');
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-uploads-'));
  const { child, url } = await startServer(dataDir);
  const pid = child.pid!;
  try {
    const token = await signIn(url, dataDir);
    console.log(`uploads benchmark: ${mib(SIZE)} MiB each way, ${ROUNDS} rounds, server pid ${pid} (node ${process.version}, ${os.cpus().length} cpus)`);
    const rows: Array<{ fsMs: number; upMs: number; upGrowth: number; upCpuMs: number; downMs: number; downGrowth: number; downCpuMs: number }> = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const block = randomBytes(MiB);
      const expected = expectedSha256(block);
      const before = await referenceWrite(dataDir, block);

      settleDisk();
      const up = await withRssSampling(pid, () => streamUpload(url, '/api/files', { token, size: SIZE, filename: 'bench.bin', block, hash: false }));
      if (up.result.status !== 201) throw new Error(`upload answered ${up.result.status}: ${JSON.stringify(up.result.json)}`);
      const file = up.result.json as { id: number; sha256: string; size: number };
      if (file.sha256 !== expected || file.size !== SIZE) throw new Error('the stored file differs from what was sent');

      const down = await withRssSampling(pid, () => download(url, `/api/files/${file.id}/raw`, token));
      if (down.result.status !== 200 || down.result.sha256 !== file.sha256 || down.result.size !== SIZE)
        throw new Error('the download differs from the upload');
      await fetch(`${url}/api/files/${file.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      // The faster of the fs writes just before and just after the upload: the ratio is against the best the disk did.
      const reference = { ms: Math.min(before.ms, (await referenceWrite(dataDir, block)).ms) };

      const row = {
        fsMs: reference.ms,
        upMs: up.ms,
        upGrowth: up.peak - up.baseline,
        upCpuMs: up.cpuMs,
        downMs: down.ms,
        downGrowth: down.peak - down.baseline,
        downCpuMs: down.cpuMs,
      };
      rows.push(row);
      console.log(
        `round ${round}: fs write+fsync (best of 2) ${rate(row.fsMs).toFixed(0)} MiB/s | upload ${rate(row.upMs).toFixed(0)} MiB/s, ` +
          `server CPU ${row.upCpuMs} ms, RSS ${mib(up.baseline)} → peak ${mib(up.peak)} MiB (+${mib(row.upGrowth)}) | ` +
          `download ${rate(row.downMs).toFixed(0)} MiB/s, server CPU ${row.downCpuMs} ms, RSS ${mib(down.baseline)} → peak ${mib(down.peak)} MiB (+${mib(row.downGrowth)})`,
      );
    }
    const worstUp = Math.max(...rows.map((r) => r.upGrowth));
    const worstDown = Math.max(...rows.map((r) => r.downGrowth));
    const ratios = rows.map((r) => r.fsMs / r.upMs).sort((a, b) => a - b);
    const medianRatio = ratios[Math.floor(ratios.length / 2)];
    console.log('');
    console.log(`peak server RSS growth, upload:   ${mib(worstUp)} MiB (worst of ${ROUNDS}; target ≤ 40 MiB)`);
    console.log(`peak server RSS growth, download: ${mib(worstDown)} MiB (worst of ${ROUNDS}; target ≤ 40 MiB)`);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    console.log(
      `server CPU per ${mib(SIZE)} MiB: upload ${median(rows.map((r) => r.upCpuMs))} ms, download ${median(rows.map((r) => r.downCpuMs))} ms (median)`,
    );
    console.log(
      `upload throughput / fs write+fsync throughput: ${medianRatio.toFixed(2)} (median; per round ${ratios.map((r) => r.toFixed(2)).join(', ')}; target ≥ 0.5)`,
    );
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
