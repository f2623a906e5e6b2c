// bcrypt at cost 10, asynchronous (libuv pool, off the event loop); 8 to 72 bytes because bcrypt ignores what follows.
import bcrypt from 'bcrypt';
import { BadRequest } from '../http/errors.ts';

export const BCRYPT_COST = 10;
export const PASSWORD_MIN_BYTES = 8;
export const PASSWORD_MAX_BYTES = 72;

export function assertPasswordLength(password: string, field = 'password'): void {
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes < PASSWORD_MIN_BYTES || bytes > PASSWORD_MAX_BYTES) {
    throw new BadRequest('Invalid body', [{ path: `body.${field}`, message: `must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes long` }]);
  }
}

export function hashPassword(password: string): Promise<string> {
  assertPasswordLength(password);
  return bcrypt.hash(password, BCRYPT_COST);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

/**
 * Compared against when the user does not exist, so both failures cost the same time. A fixed cost-10 hash of
 * 'not-a-real-password': hashing it at import took ~70 ms of every cold start (and of every emsctl run).
 */
export const DUMMY_HASH = '$2b$10$2Qw3pK/xdZCLXqKty7sgyuO.v3rHCvSxBQwPQavrJLeb7jF34WwNS';
