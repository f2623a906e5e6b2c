// The user record as the API shows it: never a password hash, avatar internals or token data.
import { Type, type Static } from '@sinclair/typebox';
import { ROLES, type Role, USER_LANGUAGES, USER_THEMES } from '../../platform/db/schema/users.ts';
import { displayTextPattern, Email, NullableTimestamp, PageQuery, Timestamp } from '../../platform/http/schemas.ts';

export const Username = Type.String({ minLength: 3, maxLength: 32, pattern: '^[a-zA-Z0-9_.-]+$' });
/** A plain enum rather than a union of literals: one validation error ("must be one of: …") instead of one per role. */
export const RoleName = Type.Unsafe<Role>({ type: 'string', enum: [...ROLES] });
/** Length in bytes is checked by the service (8-72); this bounds the characters. */
export const Password = Type.String({ minLength: 8, maxLength: 72 });
/** The person's staff-app language and theme; null: the browser's choice (its languages, its colour scheme). */
export const UserLanguage = Type.Unsafe<(typeof USER_LANGUAGES)[number] | null>({
  type: ['string', 'null'],
  enum: [...USER_LANGUAGES, null],
  description: "the staff app's language for this person on every device; null: the browser's languages decide",
});
export const UserTheme = Type.Unsafe<(typeof USER_THEMES)[number] | null>({
  type: ['string', 'null'],
  enum: [...USER_THEMES, null],
  description: "the staff app's theme for this person on every device; null: the browser's colour scheme decides",
});

export const User = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  role: RoleName,
  displayName: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  avatarUrl: Type.Union([Type.String(), Type.Null()]),
  lastLoginAt: NullableTimestamp,
  mustChangePassword: Type.Boolean({
    description: 'true for the generated initial admin until its password is changed: a client asks for a new password before anything else',
  }),
  language: UserLanguage,
  theme: UserTheme,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type UserView = Static<typeof User>;

export { Email };

// Request shapes of user management (DESIGN.md "Resources": user).
/** A string or null as one JSON Schema type list, so a bad value yields one error rather than one per union branch. */
export function NullableString(options: { maxLength: number; pattern?: string; description?: string }) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });
}
export const DisplayName = NullableString({ maxLength: 100, pattern: displayTextPattern(), description: 'no control or bidirectional-override characters' });
export const Phone = NullableString({ maxLength: 32, pattern: '^[0-9+()./ -]*$', description: 'digits, spaces and + ( ) . / -' });

export const UserListQuery = Type.Object({
  ...PageQuery,
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'matches username, email or display name (case-insensitive substring)' })),
  role: Type.Optional(RoleName),
});

export const CreateUserBody = Type.Object({
  username: Username,
  email: Email,
  password: Password,
  role: Type.Optional(RoleName),
  displayName: Type.Optional(DisplayName),
  phone: Type.Optional(Phone),
});

export const UpdateUserBody = Type.Object(
  {
    username: Type.Optional(Username),
    email: Type.Optional(Email),
    displayName: Type.Optional(DisplayName),
    phone: Type.Optional(Phone),
    role: Type.Optional(RoleName),
    language: Type.Optional(UserLanguage),
    theme: Type.Optional(UserTheme),
  },
  {
    minProperties: 1,
    description: 'Partial update. Admins may change every field. Users editing themselves may change email, displayName, phone, language and theme only.',
  },
);
export type UserUpdate = Static<typeof UpdateUserBody>;

export const RoleBody = Type.Object({ role: RoleName });

export const PasswordBody = Type.Object({
  currentPassword: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'required when changing your own password' })),
  newPassword: Password,
});

export const RoleList = Type.Object({ roles: Type.Array(RoleName, { description: 'lowest first' }) });
