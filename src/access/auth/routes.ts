// SPEC.md "Authentication endpoints".
import type { AuthService } from './service.ts';
import type { Config } from '../../platform/config.ts';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { presentUser, type PublicUser, type UserRow } from '../users/userRecords.ts';
import { NotFound } from '../../platform/errors.ts';
import { CodeSent, EmailBody, LoginBody, Ok, RefreshBody, RegisterBody, ResetBody, SignedIn, TokenPair, User } from './schemas.ts';
import { LOGIN_EXAMPLE, ME_EXAMPLE } from './examples.ts';

const tags = ['auth'];
/** GET /api/auth/me: the answer made of each kept user row (dropped with the row). */
const presentedRows = new WeakMap<UserRow, PublicUser>();

export type AuthRouteNeeds = { auth: AuthService; config: Config };

export function authRoutes({ auth, config }: AuthRouteNeeds) {
  const codeSent = { ok: true as const, expiresInSec: config.codeTtlSec };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/auth/login',
      responseExample: LOGIN_EXAMPLE,
      access: 'public',
      summary: 'Sign in with username or email and password',
      example: { username: 'operator1', password: 'correct-horse-42' },
      description: 'Deletes any earlier refresh token of the user (one session per user). 429 with Retry-After after repeated failures.',
      tags,
      schemas: { body: LoginBody, response: { 200: SignedIn, 401: ErrorBody, 429: ErrorBody } },
      handler: ({ body, ctx }) => auth.login(body.username, body.password, ctx.ip),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/register/send-code',
      access: 'public',
      summary: 'Email a 6-digit registration code',
      description:
        "Sends a single-use 6-digit code (valid 5 minutes) to the address when no account uses it; 409 when one does. Keeps the code in server memory only. 429 when the address or the caller's IP has asked too often.",
      example: { email: 'new.user@example.com' },
      tags,
      schemas: { body: EmailBody, response: { 200: CodeSent, 409: ErrorBody, 429: ErrorBody } },
      handler: async ({ body, ctx }) => {
        await auth.sendRegisterCode(body.email, ctx.ip);
        return codeSent;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/register',
      access: 'public',
      summary: 'Create an account with an emailed code',
      description:
        'Creates a viewer account when the code emailed to this address matches (it is spent), and signs it in (access and refresh token). 400 for a wrong or expired code, 409 when the username or email is taken.',
      example: { username: 'new.user', email: 'new.user@example.com', password: 'a-long-passphrase', code: '123456' },
      tags,
      schemas: { body: RegisterBody, response: { 201: SignedIn, 409: ErrorBody } },
      handler: async ({ body }) => new Reply(201, await auth.register(body)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/refresh',
      access: 'public',
      summary: 'Trade a refresh token for a new pair; the old one dies at once',
      description:
        'Rotates the session: the refresh token sent is deleted and a new access and refresh token are answered. 401 for an unknown, used or expired refresh token.',
      example: { refreshToken: 'dGhpcyBpcyBub3QgYSByZWFsIHJlZnJlc2ggdG9rZW4=' },
      tags,
      schemas: { body: RefreshBody, response: { 200: TokenPair, 401: ErrorBody } },
      handler: ({ body, ctx }) => auth.refresh(body.refreshToken, `${ctx.ip} ${ctx.get('user-agent')}`),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/logout',
      access: 'viewer',
      summary: "Invalidate the caller's refresh token",
      description:
        "Deletes the caller's refresh token, so the session cannot be refreshed; the access token in hand stays valid until it expires (15 minutes).",
      tags,
      schemas: { response: { 200: Ok } },
      handler: ({ user }) => {
        auth.logout(user.id);
        return { ok: true as const };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/forgot-password/send-code',
      access: 'public',
      summary: 'Email a password reset code',
      example: { email: 'jane@example.com' },
      description: 'Answers 200 whether or not the email belongs to an account.',
      tags,
      schemas: { body: EmailBody, response: { 200: CodeSent, 429: ErrorBody } },
      handler: ({ body, ctx }) => {
        auth.sendResetCode(body.email, ctx.ip);
        return codeSent;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/forgot-password/reset',
      access: 'public',
      summary: 'Set a new password with an emailed code',
      example: { email: 'jane@example.com', code: '123456', newPassword: 'a-new-passphrase' },
      description:
        "Ends the user's session: the refresh token is deleted (every device signs in again). Access tokens already issued stay valid until they expire.",
      tags,
      schemas: { body: ResetBody, response: { 200: Ok } },
      handler: async ({ body }) => {
        await auth.resetPassword(body);
        return { ok: true as const };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/me',
      responseExample: ME_EXAMPLE,
      access: 'viewer',
      summary: 'The signed-in user',
      description: "The caller's own user record (the password hash never leaves the server). Changes nothing.",
      tags,
      schemas: { response: { 200: User } },
      // The kept row is the same (frozen) object until the users table changes: so is its presented answer, whose
      // validated JSON the router then sends again as it is.
      reusesBody: true,
      handler: ({ user }) => {
        const row = auth.users.findById(user.id);
        if (!row) throw new NotFound('User not found');
        let presented = presentedRows.get(row);
        if (!presented) presentedRows.set(row, (presented = presentUser(row)));
        return presented;
      },
    }),
  ];
}
