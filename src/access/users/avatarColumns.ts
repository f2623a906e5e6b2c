// The users row's avatar columns, read and written for files' AvatarStore (the port AvatarColumns): access owns the
// users table; files keeps the image bytes and is built before access, so the composition root hands it these.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { slot } from '../../platform/db/listQuery.ts';
import { users } from '../../platform/db/schema/index.ts';

/** The avatar columns of one user: the row's read and its write, prepared once. */
export function avatarColumns(db: Db) {
  const id = eq(users.id, sql.placeholder('id'));
  const byUser = db.orm
    .select({ id: users.id, username: users.username, storedName: users.avatarStoredName, mimeType: users.avatarMimeType, avatarUrl: users.avatarUrl })
    .from(users)
    .where(id)
    .prepare();
  const save = db.orm
    .update(users)
    .set({ avatarStoredName: slot('storedName'), avatarMimeType: slot('mimeType'), avatarUrl: slot('avatarUrl'), updatedAt: slot('now') })
    .where(id)
    .prepare();
  return {
    read: (userId: number) => byUser.get({ id: userId }),
    write: (userId: number, avatar: { storedName: string | null; mimeType: string | null; avatarUrl: string | null }) =>
      void save.run({ id: userId, ...avatar, now: new Date().toISOString() }),
  };
}
