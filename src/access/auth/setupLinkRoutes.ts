// POST /api/auth/setup-link (public): the first admin chooses a password through the one-time set-up link (issue 53).
import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Config } from '../../platform/config.ts';
import { Conflict } from '../../platform/errors.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { SETUP_LINK_FILE, SETUP_TOKEN_PATTERN, setPasswordBySetupLink, setupLinkUser } from '../users/setupLink.ts';
import { INITIAL_ADMIN_FILE } from '../users/service.ts';
import { assertPasswordLength, hashPassword } from './passwords.ts';
import { SignedIn } from './schemas.ts';
import type { AuthService } from './service.ts';

export type SetupLinkRouteNeeds = { auth: AuthService; db: Db; audit: AuditLog; config: Config };

const SetupLinkBody = Type.Object(
  {
    token: Type.String({ pattern: SETUP_TOKEN_PATTERN, description: 'the part of the set-up link after #' }),
    newPassword: Type.String({ description: 'the password the admin chooses (8 to 72 bytes)' }),
  },
  { additionalProperties: false },
);

const SPENT =
  'This set-up link was used already or has expired: sign in with the password in <data dir>/initial-admin-password, or restart the service for a new link';

export function setupLinkRoutes({ auth, db, audit, config }: SetupLinkRouteNeeds) {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/auth/setup-link',
      access: 'public',
      summary: "Choose the first admin's password through the one-time set-up link, and sign in",
      example: { token: 'q5mQx1xk9kz0Jv7O2V4b3m8N1s6T0wYc2d5e8f1g4h7', newPassword: 'correct-horse-42' },
      description:
        'The link the box prints at first start and writes to <data dir>/setup-link (hashed in the database, valid once, for 7 days). ' +
        'Sets the password of the account it was issued for, retires the link and the generated-password file, and answers as a sign-in. ' +
        '409 when the link was used, has expired or is unknown (of any number of requests at once exactly one succeeds); 400 for a password of the wrong length.',
      tags: ['auth'],
      schemas: { body: SetupLinkBody, response: { 200: SignedIn, 400: ErrorBody, 409: ErrorBody } },
      handler: async ({ body }) => {
        // A spent or unknown link is refused before the (slow) hash: no work for guesses.
        if (setupLinkUser(db, body.token) === null) throw new Conflict(SPENT);
        assertPasswordLength(body.newPassword, 'newPassword');
        const passwordHash = await hashPassword(body.newPassword);
        const user = setPasswordBySetupLink(db, audit, body.token, passwordHash);
        if (!user) throw new Conflict(SPENT);
        for (const name of [SETUP_LINK_FILE, INITIAL_ADMIN_FILE]) fs.rmSync(path.join(config.dataDir, name), { force: true });
        return auth.signIn(user);
      },
    }),
  ];
}
