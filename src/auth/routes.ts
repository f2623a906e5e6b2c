// SPEC.md "Authentication endpoints".
import { defineRoute, Reply } from '../http/route.ts';
import { ErrorBody } from '../http/schemas.ts';
import { presentUser } from '../db/userRecords.ts';
import { NotFound } from '../http/errors.ts';
import type { AppDeps } from '../appDeps.ts';
import { CodeSent, EmailBody, LoginBody, Ok, RefreshBody, RegisterBody, ResetBody, SignedIn, TokenPair, User } from './schemas.ts';

const tags = ['auth'];

export function authRoutes({ auth, config }: AppDeps) {
  const codeSent = { ok: true as const, expiresInSec: config.codeTtlSec };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/auth/login',
      access: 'public',
      summary: 'Sign in with username or email and password',
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
      tags,
      schemas: { body: RegisterBody, response: { 201: SignedIn, 409: ErrorBody } },
      handler: async ({ body }) => new Reply(201, await auth.register(body)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/refresh',
      access: 'public',
      summary: 'Trade a refresh token for a new pair; the old one dies at once',
      tags,
      schemas: { body: RefreshBody, response: { 200: TokenPair, 401: ErrorBody } },
      handler: ({ body }) => auth.refresh(body.refreshToken),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/logout',
      access: 'viewer',
      summary: "Invalidate the caller's refresh token",
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
      description: 'Existing access and refresh tokens stay valid until they expire.',
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
      access: 'viewer',
      summary: 'The signed-in user',
      tags,
      schemas: { response: { 200: User } },
      handler: ({ user }) => {
        const row = auth.users.findById(user.id);
        if (!row) throw new NotFound('User not found');
        return presentUser(row);
      },
    }),
  ];
}
