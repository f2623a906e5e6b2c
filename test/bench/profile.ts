// Reads a V8 .cpuprofile (node --cpu-prof) and summarises where the time went: by function and by package.
// Run alone: node --import tsx test/bench/profile.ts <file.cpuprofile> [top]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

export type ProfileSummary = {
  file: string;
  totalMs: number;
  /** Self time per function, largest first. */
  functions: { name: string; where: string; selfMs: number; percent: number }[];
  /** Self time per package (node_modules/<pkg>), the service's own code, Node internals, GC and idle. */
  packages: { name: string; selfMs: number; percent: number }[];
  /** Time with the function anywhere on the stack (the service's own functions and the middleware they call). */
  inclusive: { name: string; where: string; totalMs: number; percent: number }[];
};

function packageOf(url: string, name: string): string {
  if (!url) return name === '(garbage collector)' ? '(gc)' : name === '(idle)' || name === '(program)' ? name : '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  if (url.startsWith('node:')) return 'node internals';
  if (url.includes('/dist/src/') || url.includes('/src/')) return `ems ${/\/src\/([^/]+)/.exec(url)?.[1] ?? ''}`.trim();
  return url;
}

/** A stretch of the profile in CLOCK_MONOTONIC microseconds (process.hrtime.bigint() / 1000n, as V8 stamps samples). */
export type Window = { label: string; fromUs: number; toUs: number };

/**
 * Self time per function and per package. With `window`, only samples taken inside it count (the load of one
 * scenario, without start-up and idle stretches around it).
 */
export function summarizeProfile(file: string, top = 25, window?: Window): ProfileSummary & { window?: string } {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  // Samples are counted, not their time deltas: on a shared machine a descheduled thread's wait lands in the delta of
  // whatever frame it resumed in (usually a syscall such as writev), while one sample is still one slice of running.
  // Each sample then weighs the mean interval, so totals stay in milliseconds. Sample i is taken at startTime + the
  // sum of deltas up to i.
  const intervalUs = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  let at = profile.startTime;
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    totalUs += intervalUs;
    selfUs.set(id, (selfUs.get(id) ?? 0) + intervalUs);
  });
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const functions = new Map<string, { name: string; where: string; us: number }>();
  const inclusive = new Map<string, { name: string; where: string; us: number }>();
  const packages = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = functionName || '(anonymous)';
    const where = url ? `${url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}` : '';
    const key = `${name} ${where}`;
    const entry = functions.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const pkg = packageOf(url, name);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    // Every distinct function on this node's stack gets the node's time once (recursion is not counted twice).
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!frame.url) continue;
      const frameWhere = `${frame.url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/')}:${frame.lineNumber + 1}`;
      const frameKey = `${frame.functionName || '(anonymous)'} ${frameWhere}`;
      if (seen.has(frameKey)) continue;
      seen.add(frameKey);
      const total = inclusive.get(frameKey) ?? { name: frame.functionName || '(anonymous)', where: frameWhere, us: 0 };
      total.us += us;
      inclusive.set(frameKey, total);
    }
  }
  const percent = (us: number) => Math.round((us / totalUs) * 1000) / 10;
  return {
    file,
    ...(window ? { window: window.label } : {}),
    totalMs: Math.round(totalUs / 1000),
    functions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfMs: Math.round(f.us / 1000), percent: percent(f.us) })),
    inclusive: [...inclusive.values()]
      .filter((f) => !f.where.startsWith('node:') && !/koa-compose|koa\/lib\/application/.test(f.where))
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, totalMs: Math.round(f.us / 1000), percent: percent(f.us) })),
    packages: [...packages.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: Math.round(us / 1000), percent: percent(us) })),
  };
}

export function formatProfile(summary: ProfileSummary & { window?: string }): string {
  const lines = [
    `CPU profile ${path.basename(summary.file)}${summary.window ? `, during ${summary.window}` : ''} (${summary.totalMs} ms of samples)`,
    '  self time by package:',
  ];
  for (const p of summary.packages) lines.push(`    ${String(p.percent).padStart(5)}%  ${String(p.selfMs).padStart(7)} ms  ${p.name}`);
  lines.push('  self time by function:');
  for (const f of summary.functions) lines.push(`    ${String(f.percent).padStart(5)}%  ${String(f.selfMs).padStart(7)} ms  ${f.name}  ${f.where}`);
  lines.push('  inclusive time (function anywhere on the stack):');
  for (const f of summary.inclusive) lines.push(`    ${String(f.percent).padStart(5)}%  ${String(f.totalMs).padStart(7)} ms  ${f.name}  ${f.where}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node --import tsx test/bench/profile.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatProfile(summarizeProfile(file, Number(process.argv[3] ?? 25)))}\n`);
}
