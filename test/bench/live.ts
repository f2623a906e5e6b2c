// What the live stream (GET /api/events, issue 53) costs the box: the service as a child process (from source, the
// built-in simulator collecting every 60 s), its CPU time (/proc/<pid>/stat) and resident memory (/proc/<pid>/status)
// over the same window with no stream open (the baseline, measured in the same run) and with 50 open streams; then the
// delay from an alert raised through the API to the moment the last of the 50 streams has it.
// npm run bench:live   (BENCH_LIVE_STREAMS=50, BENCH_LIVE_WINDOW_S=20)
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { initialAdminPassword, repoRoot, spawnService } from '../helpers/serviceProcess.ts';
import { tempDir } from '../helpers/server.ts';
import { LOOPS_AS_INSTALLED } from '../helpers/testEnv.ts';

const STREAMS = Number(process.env.BENCH_LIVE_STREAMS ?? 50);
const WINDOW_S = Number(process.env.BENCH_LIVE_WINDOW_S ?? 20);
const TICKS = 100; // USER_HZ on Linux

function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}

function rssMiB(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) / 1024;
}

/** CPU over the window; RSS sampled each second (the median: one sample may fall just before or after a GC). */
async function window(pid: number): Promise<{ cpuPercent: number; rss: number }> {
  const startCpu = cpuMs(pid);
  const started = performance.now();
  const rss: number[] = [];
  for (let s = 0; s < WINDOW_S; s++) {
    await sleep(1000);
    rss.push(rssMiB(pid));
  }
  rss.sort((a, b) => a - b);
  return { cpuPercent: ((cpuMs(pid) - startCpu) / (performance.now() - started)) * 100, rss: rss[Math.floor(rss.length / 2)]! };
}

type Stream = { seen: Map<number, number>; bytes: number; abort: AbortController };

async function openStream(url: string, token: string): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(`${url}/api/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  if (response.status !== 200) throw new Error(`stream refused: ${response.status} ${await response.text()}`);
  const stream: Stream = { seen: new Map(), bytes: 0, abort };
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        stream.bytes += value.length;
        buffer += value;
        let cut = buffer.indexOf('\n\n');
        while (cut !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (block.includes('event: alert\n')) {
            const data = JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { id: number };
            stream.seen.set(data.id, performance.now());
          }
          cut = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // closed at the end
    }
  })();
  return stream;
}

const dataDir = tempDir('ems-bench-live-');
const service = await spawnService(dataDir, { ...LOOPS_AS_INSTALLED, EMS_EVENTS_PER_USER: String(STREAMS) }, [
  '--import',
  'tsx',
  path.join(repoRoot, 'src', 'main.ts'),
]);
try {
  await service.waitForLog('EMS started');
  const pid = service.child.pid!;
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: initialAdminPassword(dataDir) }),
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  await sleep(5000); // the start-up's own work (first collection, migrations' aftermath) out of the baseline

  const idle = await window(pid);
  const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(service.url, accessToken)));
  await sleep(2000);
  const open = await window(pid);

  const delays: number[] = [];
  for (let i = 0; i < 10; i++) {
    const raised = performance.now();
    const created = await fetch(`${service.url}/api/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ title: `Bench alert ${i}`, level: 'warning' }),
    });
    const { id } = (await created.json()) as { id: number };
    for (;;) {
      if (streams.every((s) => s.seen.has(id))) break;
      await sleep(2);
    }
    delays.push(Math.max(...streams.map((s) => s.seen.get(id)!)) - raised);
    await sleep(300);
  }
  delays.sort((a, b) => a - b);
  const bytes = streams.reduce((sum, s) => sum + s.bytes, 0);
  for (const s of streams) s.abort.abort();

  console.log(
    `\nLive stream cost (${STREAMS} streams, ${WINDOW_S} s windows, Node ${process.versions.node}, ${(await import('node:os')).cpus().length} cores)`,
  );
  console.log('| | CPU (% of one core) | RSS MiB |');
  console.log('|---|---|---|');
  console.log(`| no stream open (baseline, median RSS) | ${idle.cpuPercent.toFixed(2)} | ${idle.rss.toFixed(1)} |`);
  console.log(`| ${STREAMS} streams open (median RSS) | ${open.cpuPercent.toFixed(2)} | ${open.rss.toFixed(1)} |`);
  console.log(
    `| difference | ${(open.cpuPercent - idle.cpuPercent).toFixed(2)} (×${(open.cpuPercent / Math.max(idle.cpuPercent, 0.01)).toFixed(2)}) | ${(open.rss - idle.rss).toFixed(1)} (${(((open.rss - idle.rss) * 1024) / STREAMS).toFixed(0)} KiB a stream) |`,
  );
  console.log(
    `\nAlert raised through the API → the last of ${STREAMS} streams has it: median ${delays[5]!.toFixed(1)} ms, max ${delays[9]!.toFixed(1)} ms (10 alerts); ${(bytes / 1024).toFixed(1)} KiB received in all`,
  );
} finally {
  service.child.kill('SIGTERM');
  await service.exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
}
