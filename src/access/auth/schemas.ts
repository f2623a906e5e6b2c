// Request and response shapes of the sign-in endpoints.
import { Type } from '@sinclair/typebox';
import { Email, Ok } from '../../platform/http/schemas.ts';
import { Password, User, Username } from '../users/schemas.ts';

export const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 254, description: 'username or email' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

export const SignedIn = Type.Object({ accessToken: Type.String(), refreshToken: Type.String(), user: User });
export const TokenPair = Type.Object({ accessToken: Type.String(), refreshToken: Type.String() });

export const EmailBody = Type.Object({ email: Email });

export const Code = Type.String({ pattern: '^[0-9]{6}$', description: '6 digits from the email' });

export const RegisterBody = Type.Object({ username: Username, email: Email, password: Password, code: Code });

export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 256 }) });

export const ResetBody = Type.Object({ email: Email, code: Code, newPassword: Password });

export const CodeSent = Type.Object({
  ok: Type.Literal(true),
  expiresInSec: Type.Integer({ description: 'how long the code is valid' }),
});

export { Ok, User };
