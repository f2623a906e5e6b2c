// Sign-in core: login, registration, refresh rotation, logout, password reset; no Koa types here.
import type { Db } from '../db/client.ts';
import { BadGateway, BadRequest, Conflict, Unauthorized } from '../http/errors.ts';
import { ROLES } from '../db/schema/users.ts';
import type { AuthUser } from '../http/route.ts';
import type { Logger } from '../logger.ts';
import type { Mailer } from '../mail/mailer.ts';
import { assertUnique, insertUser, presentUser, setPasswordHash, UserLookup, type UserRow } from '../db/userRecords.ts';
import type { UserView } from '../users/schemas.ts';
import { LoginThrottle } from './loginThrottle.ts';
import { assertPasswordLength, DUMMY_HASH, hashPassword, verifyPassword } from './passwords.ts';
import { RefreshTokens } from './refreshTokens.ts';
import { SigningKeys } from './signingKeys.ts';
import { VerificationCodes, type CodePurpose } from './verificationCodes.ts';

export type TokenPair = { accessToken: string; refreshToken: string };
export type SignedIn = TokenPair & { user: UserView };

/** SPEC.md: a self-registered user gets the lowest entry of the role list. */
export const DEFAULT_ROLE = ROLES[0];

const WRONG_CREDENTIALS = 'Invalid username or password';

export type AuthServiceOptions = {
  db: Db;
  logger: Logger;
  mailer: Mailer;
  jwtSecret: string | undefined;
  accessTokenTtlSec: number;
  refreshTokenTtlSec: number;
  codeTtlSec: number;
};

export class AuthService {
  readonly keys: SigningKeys;
  readonly refreshTokens: RefreshTokens;
  readonly codes: VerificationCodes;
  readonly throttle: LoginThrottle;
  readonly users: UserLookup;
  private readonly db: Db;
  private readonly logger: Logger;
  private readonly mailer: Mailer;
  private readonly codeTtlSec: number;
  private readonly touchLogin;

  constructor(options: AuthServiceOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.mailer = options.mailer;
    this.codeTtlSec = options.codeTtlSec;
    this.keys = new SigningKeys(options.db, options.jwtSecret, options.accessTokenTtlSec);
    this.refreshTokens = new RefreshTokens(options.db, options.refreshTokenTtlSec);
    this.codes = new VerificationCodes(options.codeTtlSec * 1000);
    this.throttle = new LoginThrottle(options.db);
    this.users = new UserLookup(options.db);
    this.touchLogin = options.db.sqlite.prepare('UPDATE users SET last_login_at = ? WHERE id = ?');
  }

  /** The user behind a bearer token, re-read on every call so deletions and role changes apply at once. */
  userFromAccessToken(token: string): AuthUser | undefined {
    const claims = this.keys.verify(token);
    if (!claims) return undefined;
    return this.users.authUser(claims.userId);
  }

  /** Issues the service's own pair; any earlier refresh token of the user is deleted first. */
  signIn(user: UserRow): SignedIn {
    const refreshToken = this.refreshTokens.issue(user.id);
    const now = new Date().toISOString();
    this.touchLogin.run(now, user.id);
    return { accessToken: this.keys.sign({ userId: user.id, username: user.username }), refreshToken, user: presentUser({ ...user, lastLoginAt: now }) };
  }

  /** Username-or-email and password; the same 401 for an unknown user and a wrong password. */
  async verifyCredentials(login: string, password: string): Promise<UserRow> {
    const user = this.users.findByLogin(login);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) throw new Unauthorized(WRONG_CREDENTIALS);
    return user;
  }

  async login(login: string, password: string, address: string): Promise<SignedIn> {
    this.throttle.assertAllowed(login, address);
    let user: UserRow;
    try {
      user = await this.verifyCredentials(login, password);
    } catch (error) {
      this.throttle.recordFailure(login, address);
      throw error;
    }
    this.throttle.recordSuccess(login);
    // The user may have been deleted while bcrypt ran.
    const current = this.users.findById(user.id);
    if (!current) throw new Unauthorized(WRONG_CREDENTIALS);
    return this.signIn(current);
  }

  refresh(refreshToken: string): TokenPair {
    const rotated = this.refreshTokens.rotate(refreshToken);
    const user = rotated && this.users.findById(rotated.userId);
    if (!rotated || !user) throw new Unauthorized('Refresh token is invalid or expired; sign in again');
    return { accessToken: this.keys.sign({ userId: user.id, username: user.username }), refreshToken: rotated.token };
  }

  logout(userId: number): void {
    this.refreshTokens.revokeForUser(userId);
  }

  private async sendCode(email: string, purpose: CodePurpose): Promise<void> {
    const code = this.codes.issue(email, purpose);
    const minutes = Math.round(this.codeTtlSec / 60);
    const subject = purpose === 'register' ? 'Your EMS registration code' : 'Your EMS password reset code';
    const text = `Your EMS ${purpose === 'register' ? 'registration' : 'password reset'} code is ${code}.\nIt is valid for ${minutes} minute${minutes === 1 ? '' : 's'} and can be used once.\nIf you did not ask for it, ignore this message.`;
    try {
      await this.mailer.send({ to: email, subject, text }, { code, purpose });
    } catch (error) {
      this.codes.withdraw(email, purpose);
      this.logger.error({ err: { message: (error as Error).message }, purpose }, 'could not send a verification code');
      throw new BadGateway('The verification email could not be sent; try again later');
    }
  }

  async sendRegisterCode(email: string): Promise<void> {
    if (this.users.findByEmail(email)) throw new Conflict('That email is already registered');
    await this.sendCode(email, 'register');
  }

  /** Answers the same whether or not the email exists; only a known email gets a message. */
  async sendResetCode(email: string): Promise<void> {
    this.codes.assertCanSend(email, 'reset');
    if (!this.users.findByEmail(email)) return;
    await this.sendCode(email, 'reset');
  }

  async register(input: { username: string; email: string; password: string; code: string }): Promise<SignedIn> {
    assertPasswordLength(input.password);
    assertUnique(this.db, input.username, input.email);
    this.codes.check(input.email, 'register', input.code);
    const passwordHash = await hashPassword(input.password);
    // Code use, user row and refresh token in one synchronous step: the code cannot be spent twice.
    return this.db.sqlite.transaction(() => {
      this.codes.consume(input.email, 'register', input.code);
      const user = insertUser(this.db, { username: input.username, email: input.email, passwordHash, role: DEFAULT_ROLE });
      return this.signIn(user);
    })();
  }

  /** Live access tokens and the refresh token survive a reset (SPEC.md Authentication endpoints, rule 4). */
  async resetPassword(input: { email: string; code: string; newPassword: string }): Promise<void> {
    assertPasswordLength(input.newPassword, 'newPassword');
    this.codes.check(input.email, 'reset', input.code);
    const passwordHash = await hashPassword(input.newPassword);
    this.codes.consume(input.email, 'reset', input.code);
    const user = this.users.findByEmail(input.email);
    if (!user) throw new BadRequest('Invalid or expired verification code');
    setPasswordHash(this.db, user.id, passwordHash);
  }
}
