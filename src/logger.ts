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
    destination,
  );
}
