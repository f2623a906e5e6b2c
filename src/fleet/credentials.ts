// Site credentials, enrolment codes and user tokens: random, shown once, stored only as their SHA-256. They carry 256
// (credentials, tokens) or 100+ bits (codes) of randomness, so a fast hash is enough: nothing to brute-force.
import { createHash, randomBytes } from 'node:crypto';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A site credential, user token, session or invitation: `ems_site_…`, `ems_user_…`…, so a leaked one is recognisable in a log scan. */
export function newSecret(prefix: 'site' | 'user' | 'session' | 'invite'): string {
  return `ems_${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** An enrolment code an admin can read out or paste: 20 characters of Crockford base32 in groups of five (100 bits). */
export function newEnrolmentCode(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const bytes = randomBytes(20);
  let code = '';
  for (let i = 0; i < 20; i++) code += alphabet[bytes[i]! & 31];
  return code.match(/.{5}/g)!.join('-');
}

/** Codes are compared in their canonical form: upper case, dashes and spaces ignored. */
export function canonicalCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/** The secret from an `Authorization: Bearer …` header, or undefined. */
export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer ([A-Za-z0-9._~+/=-]{10,200})$/.exec(header ?? '');
  return match?.[1];
}
