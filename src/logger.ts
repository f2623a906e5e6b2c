// Structured JSON logs to stdout (journald keeps them); secrets are redacted by path as a second line of defence.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'ems' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['password', '*.password', 'token', '*.token', 'accessToken', 'refreshToken', '*.accessToken', '*.refreshToken', 'authorization', '*.authorization'],
        censor: '[redacted]',
      },
    },
    destination ?? bufferedStdout(),
  );
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
