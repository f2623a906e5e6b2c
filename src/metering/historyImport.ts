// History import: a CSV of past 15-minute intervals (kWh) or counter readings per meter, as utilities' portals export
// them, checked like live readings, reported per meter (dry run), refused on overlap unless asked to replace, and
// written through the interval store in slices that give the event loop back every SLICE_MS.
//
// The parts: importCsv.ts reads a line's text; importPlan.ts turns the rows into per-meter days (checked, bad rows kept
// with their line); importWrite.ts counts them against the store (the dry run) and writes them a slice at a time, taking
// the collector's turns; importReport.ts is the answer per meter; importSlices.ts the event-loop slices and what they
// took. This file reads the upload and queues the writes.
import type { Actor } from '../platform/db/auditTrail.ts';
import { BadRequest, PayloadTooLarge } from '../platform/errors.ts';
import { CsvPlanner, type MeterPlan } from './importPlan.ts';
import { acceptable, suspectSummary, suspectsOf, type ImportReport, type MeterReport } from './importReport.ts';
import type { FoundRun, SuspectRuns } from './suspectRuns.ts';
import { lastRead, SLICE_MS, yieldLoop } from './importSlices.ts';
import { refuseUnwritable, survey, writeImport, type CollectionTurns, type WriteControl, type WriteDeps } from './importWrite.ts';

/** Bytes one file may hold (~40 B a row at the row cap). */
export const IMPORT_MAX_BYTES = 256 * 1024 * 1024;

export class HistoryImport {
  /**
   * Imports that write run one after the other: each sees the last one's intervals as stored (overlap, never a double
   * count). The collector's turns do not give that: they are taken a slice at a time, and two imports' slices would
   * interleave (both surveyed before either wrote: two 200s, each writing part of the file).
   */
  private queue: Promise<unknown> = Promise.resolve();
  private collection: CollectionTurns | null = null;

  constructor(private readonly deps: WriteDeps & { suspects: SuspectRuns; now?: () => number }) {}

  /**
   * Set once the collector exists (it is built after the energy pieces). Each write slice then takes a turn of the
   * collector: a collection counts into day rows it loaded before, so a slice written in the middle of one was written
   * over (or added to) when the collection saved them. A collection that starts meanwhile waits at most one slice.
   */
  takeTurnsWith(collection: CollectionTurns): void {
    this.collection = collection;
  }

  private suspectsRecorded: () => void = () => undefined;

  /** Told after an import recorded suspect runs (the data watch raises their alerts). */
  afterSuspects(listener: () => void): void {
    this.suspectsRecorded = listener;
  }

  /**
   * Reads the CSV body (an async iterable of chunks), checks it, and writes it unless `dryRun`. Bad rows: 400 naming
   * their lines; refused rows: 400 (a dry run reports them); overlaps with stored intervals: 409 unless `replace`.
   */
  async run(body: AsyncIterable<Buffer | string>, options: { dryRun: boolean; replace: boolean }, actor: Actor | null): Promise<ImportReport> {
    const read = await this.read(body, options);
    if (options.dryRun) return this.dryRun(read);
    return this.write(read, actor);
  }

  /**
   * The background form (importJobs.ts): the file read and checked as run() does (bad rows 400, refused 400, overlap
   * 409, all before anything is queued), then its write queued with a control: progress after each slice, a cancel
   * that takes back what was written. Answers the read file (its header and plans) and the write's promise.
   */
  async begin(
    body: AsyncIterable<Buffer | string>,
    options: { replace: boolean },
    actor: Actor | null,
    control: WriteControl,
  ): Promise<{ header: ReadFile['header']; meters: number; done: Promise<ImportReport> }> {
    const read = await this.read(body, { dryRun: false, replace: options.replace });
    refuseUnwritable(await survey(this.deps.store, read.plans, options.replace), options.replace);
    return { header: read.header, meters: read.plans.length, done: this.write(read, actor, control) };
  }

  private async dryRun({ plans, header, timezone }: ReadFile): Promise<ImportReport> {
    const meters = await survey(this.deps.store, plans, header.replace);
    withSuspects(meters, await suspectsOf(this.deps.suspects, plans, timezone));
    return { ...header, accepted: acceptable(meters, header.replace), written: false, meters };
  }

  private write({ plans, header, timezone }: ReadFile, actor: Actor | null, control?: WriteControl): Promise<ImportReport> {
    const run = this.queue.then(async () => {
      const report = await writeImport(this.deps, this.collection, plans, header, timezone, actor, control);
      // The runs of what is now stored: recorded (one alert each from the data watch), listed in the answer.
      const runs = await suspectsOf(this.deps.suspects, plans, timezone);
      for (const [meterId, found] of runs) this.deps.suspects.record(meterId, found, 'import');
      if (runs.size) this.suspectsRecorded();
      withSuspects(report.meters, runs);
      return report;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The file read, parsed and checked (bad rows 400): its plans per meter, sorted by meter. */
  private async read(body: AsyncIterable<Buffer | string>, options: { dryRun: boolean; replace: boolean }): Promise<ReadFile> {
    const timezone = this.deps.timezone();
    const planner = new CsvPlanner(this.deps.meters.all(), timezone, this.deps.now?.() ?? Date.now());
    const decoder = new TextDecoder('utf-8');
    let busy = 0;
    let bytes = 0;
    lastRead.longestMs = 0;
    const chunks = body[Symbol.asyncIterator]();
    for (;;) {
      let step: IteratorResult<Buffer | string>;
      try {
        step = await chunks.next();
      } catch {
        // The client went away (or the connection broke) before the whole file arrived: nothing is written.
        throw new BadRequest('The upload was aborted before the file was complete: nothing was imported');
      }
      if (step.done) break;
      const chunk = step.value;
      bytes += chunk.length;
      if (bytes > IMPORT_MAX_BYTES) throw new PayloadTooLarge(`The file is larger than ${IMPORT_MAX_BYTES} bytes: split it`);
      // Chunks already received arrive without a turn of the event loop, and one may hold thousands of lines: the loop
      // is given back every SLICE_MS, inside a chunk too.
      // Only the work here counts (waiting for the next chunk of a slow upload gives the loop back by itself).
      let from = performance.now();
      const lines = planner.lines(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      for (let i = 0; i < lines.length; i += 1) {
        planner.takeLine(lines[i]);
        if ((i & 255) === 255 || i === lines.length - 1) {
          const now = performance.now();
          busy += now - from;
          from = now;
          if (busy > SLICE_MS) {
            lastRead.longestMs = Math.max(lastRead.longestMs, busy);
            await yieldLoop();
            busy = 0;
            from = performance.now();
          }
        }
      }
    }
    for (const line of planner.lines(decoder.decode())) planner.takeLine(line);
    planner.end();
    if (planner.form === 'counter') {
      for (const plan of planner.plans.values()) {
        planner.counterIntervals(plan);
        await yieldLoop();
      }
    }
    if (planner.badCount) {
      throw new BadRequest(
        `${planner.badCount} bad row${planner.badCount === 1 ? '' : 's'}: nothing was imported`,
        planner.bad.map(({ line, message }) => ({ path: `line ${line}`, message })),
      );
    }
    const plans = [...planner.plans.values()].sort((a, b) => a.meterId - b.meterId);
    const header = { dryRun: options.dryRun, replace: options.replace, form: planner.form!, rows: planner.rows };
    return { plans, header, timezone };
  }
}

type ReadFile = {
  plans: MeterPlan[];
  header: Omit<ImportReport, 'accepted' | 'written' | 'meters'>;
  timezone: string;
};

/** Each meter's report with its suspect runs (a meter without any keeps the empty summary report() gave it). */
function withSuspects(meters: MeterReport[], runs: Map<number, FoundRun[]>): void {
  for (const meter of meters) {
    const found = runs.get(meter.meterId);
    if (found) meter.suspect = suspectSummary(found);
  }
}
