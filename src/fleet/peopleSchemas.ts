// What the sign-in and user routes take and answer (src/fleet/people.ts, sso.ts, peopleRoutes.ts).
import { type Static, Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

const Role = Type.Union([Type.Literal('viewer'), Type.Literal('admin')]);
const Sites = Type.Array(Type.String({ format: 'uuid' }), { maxItems: 1000, description: 'The sites the user is limited to; empty: every site.' });
/** bcrypt reads 72 bytes (checked in bytes by the handler; 72 characters here). */
const Password = Type.String({ minLength: 8, maxLength: 72 });

export const SignInSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200, description: 'The user’s name or email.' }), password: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const AcceptInvitationSchema = Type.Object(
  { invitation: Type.String({ minLength: 10, maxLength: 200 }), password: Password },
  { additionalProperties: false },
);
export const InviteSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^\\S(.*\\S)?$' }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 200 })),
    role: Role,
    sites: Type.Optional(Sites),
  },
  { additionalProperties: false },
);
export const UpdatePersonSchema = Type.Object({ role: Type.Optional(Role), sites: Type.Optional(Sites) }, { additionalProperties: false });
export const PersonParamsSchema = Type.Object({ id: Type.String({ description: 'The fleet user id (an integer).' }) });

export const SessionSchema = Type.Object({ token: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }, { additionalProperties: false });
export const SignInOptionsSchema = Type.Object(
  { password: Type.Literal(true), sso: Type.Union([Type.Object({ name: Type.String() }, { additionalProperties: false }), Type.Null()]) },
  { additionalProperties: false },
);
export const InvitationSchema = Type.Object(
  {
    id: Type.Integer(),
    invitation: Type.String({ description: 'Given once: the person sets their password with it.' }),
    expiresAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const PeopleSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          id: Type.Integer(),
          name: Type.String(),
          email: Type.Union([Type.String(), Type.Null()]),
          role: Role,
          sites: Type.Union([Type.Array(Type.String({ format: 'uuid' })), Type.Null()]),
          signIn: Type.Array(Type.Union([Type.Literal('token'), Type.Literal('password'), Type.Literal('sso')])),
          invitationOpen: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const ajv = new Ajv({ allErrors: false, strict: true });
addFormats.default(ajv, ['email', 'uuid']);
export const validateSignIn = ajv.compile<Static<typeof SignInSchema>>(SignInSchema);
export const validateAcceptInvitation = ajv.compile<Static<typeof AcceptInvitationSchema>>(AcceptInvitationSchema);
export const validateInvite = ajv.compile<Static<typeof InviteSchema>>(InviteSchema);
export const validateUpdatePerson = ajv.compile<Static<typeof UpdatePersonSchema>>(UpdatePersonSchema);
