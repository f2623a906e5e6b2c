// Column helpers shared by every area: ISO-8601 UTC timestamps as text, so rows read the same in the sqlite shell.
import { integer, text } from 'drizzle-orm/sqlite-core';

export const nowIso = () => new Date().toISOString();

export const id = () => integer('id').primaryKey({ autoIncrement: true });
export const createdAt = () => text('created_at').notNull().$defaultFn(nowIso);
export const updatedAt = () => text('updated_at').notNull().$defaultFn(nowIso).$onUpdateFn(nowIso);
