// The user record as the API shows it: never a password hash, avatar internals or token data.
import { Type, type Static } from '@sinclair/typebox';
import { ROLES } from '../db/schema/users.ts';
import { Email, NullableTimestamp, Timestamp } from '../http/schemas.ts';

export const Username = Type.String({ minLength: 3, maxLength: 32, pattern: '^[a-zA-Z0-9_.-]+$' });
export const RoleName = Type.Union(ROLES.map((role) => Type.Literal(role)));
/** Length in bytes is checked by the service (8-72); this bounds the characters. */
export const Password = Type.String({ minLength: 8, maxLength: 72 });

export const User = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  role: RoleName,
  displayName: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  avatarUrl: Type.Union([Type.String(), Type.Null()]),
  lastLoginAt: NullableTimestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type UserView = Static<typeof User>;

export { Email };
