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
 * stdout, written in batches: lines gather until 4 KiB (then one synchronous write for ~15 request lines) or for at
 * most 200 ms, and whatever is pending is written synchronously when the process exits — a clean stop, process.exit
 * or an uncaught exception. (Asynchronous writes cost more here: each goes through libuv's thread pool.)
 */
function bufferedStdout(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: true, minLength: 4096, periodicFlush: 200 });
  process.on('exit', () => stream.flushSync());
  return stream;
}
