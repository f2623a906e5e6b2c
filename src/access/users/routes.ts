// /api/users: user management (admins), and reading and editing your own record (everyone). Avatars live in avatarRoutes.ts.
import { Type } from '@sinclair/typebox';
import { ROLES } from '../../platform/db/schema/users.ts';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import { CreateUserBody, PasswordBody, RoleBody, RoleList, UpdateUserBody, User, UserListQuery } from './schemas.ts';
import type { UserDirectory } from './service.ts';

const tags = ['users'];

/** auth's renewSession (declared here: users does not import auth, which imports users). */
export type UserRouteNeeds = { users: UserDirectory; auth: { renewSession(userId: number): { accessToken: string; refreshToken: string } | undefined } };

/** A password change's answer: a new pair for the caller's own device when the password was the caller's own. */
const PasswordChanged = Type.Object({
  ok: Type.Literal(true),
  accessToken: Type.Optional(Type.String({ description: "your own change only: this device's new access token" })),
  refreshToken: Type.Optional(Type.String({ description: "your own change only: this device's new refresh token (the old one is deleted)" })),
});

export function userRoutes({ users, auth }: UserRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/users',
      access: 'admin',
      summary: 'List users, newest first',
      description: 'A page of user records (never a password hash). Changes nothing.',
      tags,
      schemas: { query: UserListQuery, response: { 200: Page(User), 400: ErrorBody } },
      handler: ({ query }) => users.list(query),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/users',
      access: 'admin',
      summary: 'Create a user with a password (default role: viewer)',
      description: 'Creates an account that can sign in at once with the password given. 409 when the username or email is taken. Audited.',
      example: { username: 'jane.doe', email: 'jane@example.com', password: 'a-long-passphrase', role: 'operator', displayName: 'Jane Doe' },
      tags,
      schemas: { body: CreateUserBody, response: { 201: User, 400: ErrorBody, 409: ErrorBody } },
      handler: async ({ body, user }) => new Reply(201, await users.create(user, body)),
    }),
    // Declared before /api/users/:id so "roles" is not read as an id.
    defineRoute({
      method: 'GET',
      path: '/api/users/roles',
      access: 'viewer',
      summary: 'The roles, lowest first',
      description: 'viewer, operator, admin: each may do everything the one before it may. Changes nothing.',
      tags,
      schemas: { response: { 200: RoleList } },
      handler: () => ({ roles: [...ROLES] }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/:id',
      access: 'viewer',
      summary: 'Read a user (admins: anyone; others: themselves)',
      description: "One user record: admins may read anyone's, others only their own (403). Changes nothing.",
      tags,
      schemas: { params: IdParams, response: { 200: User, 403: ErrorBody, 404: ErrorBody } },
      handler: ({ params, user }) => users.get(user, params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/:id',
      access: 'viewer',
      summary: 'Update a user (partial)',
      example: { displayName: 'Jane Doe', phone: '+49 30 1234567' },
      description:
        'Admins may change username, email, displayName, phone, role, language and theme. Anyone may change email, displayName, phone, language and theme on their own record ' +
        "(language and theme: the staff app's on every device the person signs in on; null gives the choice back to the browser); " +
        'changing your own username or role without being admin is 403. Demoting the last admin is 409.',
      tags,
      schemas: { params: IdParams, body: UpdateUserBody, response: { 200: User, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => users.updateUser(user, params.id, body),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/users/:id',
      access: 'admin',
      summary: 'Delete a user; its sessions end at once',
      description: 'Deletes the refresh token too; live access tokens are refused from the next request. Deleting the last admin is 409.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, 409: ErrorBody } },
      handler: async ({ params, user }) => {
        await users.deleteUser(user, params.id);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/:id/role',
      access: 'admin',
      summary: "Change a user's role (effective on the user's next request)",
      example: { role: 'operator' },
      description: 'Demoting the last admin is 409.',
      tags,
      schemas: { params: IdParams, body: RoleBody, response: { 200: User, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => users.setRole(user, params.id, body.role),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/:id/password',
      access: 'viewer',
      summary: 'Change a password',
      example: { currentPassword: 'correct-horse-42', newPassword: 'a-new-passphrase' },
      description:
        'Your own password needs currentPassword (a wrong one is 400 and counts towards the sign-in throttle, 429 after repeated failures). ' +
        "Admins may set another user's password without it. The user's refresh token is deleted, so every other device " +
        'must sign in again; a change of your own password answers a new accessToken and refreshToken for this device.',
      tags,
      schemas: { params: IdParams, body: PasswordBody, response: { 200: PasswordChanged, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody } },
      handler: async ({ params, body, user, ctx }) => {
        await users.setPassword(user, params.id, body, ctx.ip);
        const renewed = user.id === params.id ? auth.renewSession(user.id) : undefined;
        return renewed ? { ok: true as const, ...renewed } : { ok: true as const };
      },
    }),
  ];
}
