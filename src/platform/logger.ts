// Structured JSON logs to stdout (journald keeps them); secrets are redacted by path as a second line of defence.
import fs from 'node:fs';
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * sd-daemon priority prefixes by the first letter of the level label (fatal/error → err, warn → warning,
 * info → info, debug/trace → debug): journald reads `<N>` off the start of a line and files it at that priority.
 */
const PRIORITY_PREFIX: Record<string, string> = { f: '<3>', e: '<3>', w: '<4>', i: '<6>', d: '<7>', t: '<7>' };
/** Every line starts `{"level":"<label>"` (the level formatter below): the label's first letter is at this index. */
const LABEL_AT = '{"level":"'.length;

function withPriority(line: string): string {
  return (PRIORITY_PREFIX[line[LABEL_AT]] ?? '') + line;
}

/**
 * True when file descriptor `fd` is the journal stream systemd connected (JOURNAL_STREAM holds its
 * `device:inode`). Checked against the descriptor itself, not just the variable's presence: a process started
 * from a service's shell inherits JOURNAL_STREAM while its output goes somewhere else.
 */
export function writesToJournal(fd: number, env: Record<string, string | undefined> = process.env): boolean {
  const stream = env.JOURNAL_STREAM;
  if (!stream) return false;
  try {
    const stat = fs.fstatSync(fd, { bigint: true });
    return stream === `${stat.dev}:${stat.ino}`;
  } catch {
    return false;
  }
}

/** One line on stderr for a start-up that cannot go on; prefixed `<3>` (err) when stderr is the journal. */
export function startupFailureLine(message: string): string {
  return `${writesToJournal(2) ? '<3>' : ''}ems: ${message}\n`;
}

/**
 * pino's isoTime, made once per millisecond: a busy service writes several request lines in the same millisecond, and
 * the Date and its ISO string were ~2.5 % of a signed-in request's CPU (issue 44). Same text as pino.stdTimeFunctions.isoTime.
 */
let stampedAt = Number.NaN;
let stamp = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** What a logger made by createLogger writes to, for lineWriter. */
const destinations = new WeakMap<Logger, { stream: pino.DestinationStream; journal: boolean }>();

export type LineLevel = 'info' | 'warn';

/**
 * A writer of one frequent line (the request log) that skips pino's serialiser: `members` are the line's fields as
 * JSON object members without braces (`"a":1,"b":"x"`, the caller escapes its strings), written as
 * `logger[level](fields, msg)` writes them — level, time, the logger's bindings, the fields, msg — through the same
 * destination (batched, flushed at exit) and journal prefix, and only when the level is enabled. Building the line by
 * hand instead of pino's per-key pass over a fresh object was ~5 % of a signed-in request (issue 44). A logger
 * createLogger did not make (or a destination that needs pino's metadata) gets the fields through the logger itself.
 */
export function lineWriter(logger: Logger, msg: string): (level: LineLevel, members: string) => void {
  const direct = destinations.get(logger);
  if (!direct || (direct.stream as { [pino.symbols.needsMetadataGsym]?: boolean })[pino.symbols.needsMetadataGsym]) {
    return (level, members) => logger[level](JSON.parse(`{${members}}`), msg);
  }
  const { stream, journal } = direct;
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  const tail = `,"msg":${JSON.stringify(msg)}}\n`;
  const heads = { info: '{"level":"info"', warn: '{"level":"warn"' };
  return (level, members) => {
    if (!logger.isLevelEnabled(level)) return;
    const line = `${heads[level]}${isoTime()}${bindings},${members}${tail}`;
    stream.write(journal ? withPriority(line) : line);
  };
}

/**
 * `journal`: prefix every line with its sd-daemon priority (default: when stdout is the journal stream).
 * Levels are written as strings ("level":"warn"), which also keeps the label at a fixed place for the prefix.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, options: { journal?: boolean } = {}): Logger {
  const journal = options.journal ?? (destination === undefined && writesToJournal(1));
  const stream = destination ?? bufferedStdout();
  const logger = pino(
    {
      level,
      base: { service: 'ems' },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: journal ? { streamWrite: withPriority } : {},
      redact: {
        paths: [
          'password',
          '*.password',
          'token',
          '*.token',
          'accessToken',
          'refreshToken',
          '*.accessToken',
          '*.refreshToken',
          'authorization',
          '*.authorization',
        ],
        censor: '[redacted]',
      },
    },
    stream,
  );
  destinations.set(logger, { stream, journal });
  return logger;
}

/**
 * A batch is written once it holds this many characters (~250 request lines; 16 KiB, ~60 lines, made a write per
 * ~60 requests, ~0.5 µs a request in a profile at 20,000 requests/s: issue 44, round 10)…
 */
const BATCH_CHARS = 64 * 1024;
/** …or this long after its first line. */
const BATCH_DELAY_MS = 200;
/** How long a write waits before trying again when stdout's reader is behind (EAGAIN), as sonic-boom does. */
const BUSY_WAIT_MS = 100;

/**
 * stdout, written in batches: lines gather until 64 KiB (then one synchronous write) or for at most 200 ms, and
 * whatever is pending is written synchronously when the process exits — a clean stop (SIGTERM), process.exit or an
 * uncaught exception. (Asynchronous writes cost more here: each goes through libuv's thread pool.) Not sonic-boom,
 * pino's own destination: it measures the byte length of its whole pending batch at every line (a batch of 4 KiB
 * flattened ~15 times), and a write is ~1.5 % of a signed-in request (issue 44); here a line is appended to one string
 * and converted to bytes once per batch.
 */
class BatchedFd implements pino.DestinationStream {
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly busy = new Int32Array(new SharedArrayBuffer(4));
  private readonly flushLater = () => {
    this.timer = undefined;
    this.flushSync();
  };

  constructor(private readonly fd: number) {}

  write(line: string): boolean {
    this.pending += line;
    if (this.pending.length >= BATCH_CHARS) this.flushSync();
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.flushLater, BATCH_DELAY_MS);
      // A batch waiting alone does not keep the process up: the exit handler writes it.
      this.timer.unref();
    }
    return true;
  }

  /** Writes what is pending now, all of it. */
  flushSync(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending === '') return;
    const data = Buffer.from(this.pending, 'utf8');
    this.pending = '';
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += fs.writeSync(this.fd, data, offset);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A reader that is behind (a non-blocking pipe is full): wait and write the rest.
        if (code === 'EAGAIN' || code === 'EBUSY') Atomics.wait(this.busy, 0, 0, BUSY_WAIT_MS);
        // stdout is gone (EPIPE, EBADF): the lines have nowhere to go, and the service goes on without them.
        else return;
      }
    }
  }

  /** pino's logger.flush(). */
  flush(done?: (error?: Error) => void): void {
    this.flushSync();
    done?.();
  }
}

function bufferedStdout(): pino.DestinationStream {
  const stream = new BatchedFd(1);
  process.on('exit', () => stream.flushSync());
  return stream;
}
