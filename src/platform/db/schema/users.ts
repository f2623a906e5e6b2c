// Accounts, refresh tokens, OAuth links and login throttling.
import { sql } from 'drizzle-orm';
import { integer, sqliteTable, text, uniqueIndex, index } from 'drizzle-orm/sqlite-core';
import { createdAt, id, updatedAt } from './columns.ts';

import { ROLES } from '../../roles.ts';

export { ROLES, type Role } from '../../roles.ts';

/** The staff app's languages and themes a person may choose (src/web/app/i18n, src/web/app/state/theme.ts). */
export const USER_LANGUAGES = ['en', 'de', 'fr', 'es'] as const;
export const USER_THEMES = ['light', 'dark'] as const;

export const users = sqliteTable(
  'users',
  {
    id: id(),
    username: text('username').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    role: text('role', { enum: ROLES }).notNull().default('viewer'),
    displayName: text('display_name'),
    phone: text('phone'),
    avatarUrl: text('avatar_url'),
    avatarStoredName: text('avatar_stored_name'),
    avatarMimeType: text('avatar_mime_type'),
    lastLoginAt: text('last_login_at'),
    /** Set for the generated initial admin: the staff app asks for a new password before anything else; any password change clears it. */
    mustChangePassword: integer('must_change_password', { mode: 'boolean' }).notNull().default(false),
    /** The person's own language and theme for the staff app (null: the browser's choice), kept here so a second device gets them. */
    language: text('language', { enum: USER_LANGUAGES }),
    theme: text('theme', { enum: USER_THEMES }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('users_username_unique').on(sql`${t.username} COLLATE NOCASE`), uniqueIndex('users_email_unique').on(sql`${t.email} COLLATE NOCASE`)],
);

/** One row per user at most: login and register replace it, refresh rotates it. Only a SHA-256 of the token is kept. */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('refresh_tokens_hash_unique').on(t.tokenHash), uniqueIndex('refresh_tokens_user_unique').on(t.userId)],
);

/**
 * Hashes of refresh tokens already rotated away, until they would have expired: one presented again is a replay
 * (RFC 9700 §4.14.2) and ends the user's session (migration 0006).
 */
export const retiredRefreshTokens = sqliteTable('refresh_tokens_retired', {
  tokenHash: text('token_hash').primaryKey(),
  userId: integer('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  expiresAt: integer('expires_at').notNull(),
});

export const oauthLinks = sqliteTable(
  'oauth_links',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    providerUserId: text('provider_user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oauth_links_identity_unique').on(t.provider, t.providerUserId),
    uniqueIndex('oauth_links_user_provider_unique').on(t.userId, t.provider),
  ],
);

/** Failed-login counters, in the database so `emsctl user unlock` can clear them while the server runs. */
export const loginThrottle = sqliteTable(
  'login_throttle',
  {
    key: text('key').primaryKey(),
    failures: integer('failures').notNull(),
    windowStartedAt: integer('window_started_at').notNull(),
  },
  (t) => [index('login_throttle_window_idx').on(t.windowStartedAt)],
);

/** The one-time set-up link of the first admin (issue 53, access/auth/setupLink.ts): its SHA-256 only, used once, until expires_at. */
export const setupLinks = sqliteTable(
  'setup_links',
  {
    id: id(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('setup_links_hash_unique').on(t.tokenHash)],
);
