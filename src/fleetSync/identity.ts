// The box's own identity towards a fleet, kept beside the database and never in it: an install id made at the first
// start on this machine (sent with every batch, so the fleet takes a site's rows from one box only) and the key that
// seals the site's credential in the database. A backup copies the database and the uploads, models and avatars
// folders (src/operations/backup), never this file: a restore on the same box finds it and goes on; a restore on another
// machine (a spare prepared from a backup) makes its own, so the fleet sees a second box and the credential it
// finds in the database cannot be opened: the box says a re-join is needed (`emsctl fleet status`).
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../platform/db/client.ts';

/** The file in the data dir (beside ems.db), owner-only. */
export const IDENTITY_FILE = 'fleet-identity.json';

export type BoxIdentity = { installId: string; key: Buffer };

const SEALED = 'sealed:v1:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** In-memory databases (a few tests) get one identity per process. */
let memoryIdentity: BoxIdentity | undefined;

/** What this process read, per data dir (the file does not change under a running box). */
const known = new Map<string, BoxIdentity>();

/** The identity file in `dir`, made at the first call on this machine (written whole, then linked into place). */
export function identityIn(dir: string): BoxIdentity {
  const cached = known.get(dir);
  if (cached) return cached;
  const identity = loadOrMake(dir);
  known.set(dir, identity);
  return identity;
}

function loadOrMake(dir: string): BoxIdentity {
  const file = path.join(dir, IDENTITY_FILE);
  const read = (): BoxIdentity | undefined => {
    try {
      const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { installId?: unknown; key?: unknown };
      const key = typeof parsed.key === 'string' ? Buffer.from(parsed.key, 'base64') : Buffer.alloc(0);
      if (typeof parsed.installId === 'string' && UUID.test(parsed.installId) && key.length === 32) return { installId: parsed.installId, key };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return undefined;
  };
  const existing = read();
  if (existing) return existing;
  const made = { installId: randomUUID(), key: randomBytes(32) };
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify({ installId: made.installId, key: made.key.toString('base64') }), { mode: 0o600 });
  // emsctl run as root may be the first to need it: the file belongs to the data dir's owner (the service's user).
  if (process.getuid?.() === 0) {
    const { uid, gid } = fs.statSync(dir);
    fs.chownSync(temp, uid, gid);
  }
  // Two processes starting at once (the service and emsctl): the first link wins, both then read the same file.
  try {
    fs.linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  return read()!;
}

/** Forgets what this process read (a test that moves a database to "another machine"). */
export function forgetIdentities(): void {
  known.clear();
}

/** The identity of the box whose database this is (the file beside the database file). */
export function identityOf(db: Db): BoxIdentity {
  const file = db.sqlite.name;
  if (!file || file === ':memory:' || db.sqlite.memory) {
    memoryIdentity ??= { installId: randomUUID(), key: randomBytes(32) };
    return memoryIdentity;
  }
  return identityIn(path.dirname(path.resolve(file)));
}

/** The credential as stored: AES-256-GCM under the box's key, bound to the site id. */
export function sealCredential(identity: BoxIdentity, siteId: string, credential: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', identity.key, iv);
  cipher.setAAD(Buffer.from(siteId, 'utf8'));
  const sealed = Buffer.concat([cipher.update(credential, 'utf8'), cipher.final()]);
  return `${SEALED}${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED);
}

/**
 * The credential in clear, or null when it was sealed on another machine (a restore elsewhere: a re-join is needed).
 * A credential stored in clear by an older box is returned as it is (the sync job seals it at its next tick).
 */
export function openCredential(identity: BoxIdentity, siteId: string, stored: string): string | null {
  if (!isSealed(stored)) return stored;
  const [iv, tag, body] = stored.slice(SEALED.length).split('.');
  try {
    const decipher = createDecipheriv('aes-256-gcm', identity.key, Buffer.from(iv ?? '', 'base64url'));
    decipher.setAAD(Buffer.from(siteId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body ?? '', 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
