// Sign-in core: login, registration, refresh rotation, logout, password reset; no Koa types here.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { slot } from '../../platform/db/listQuery.ts';
import { BadGateway, BadRequest, Conflict, Unauthorized } from '../../platform/errors.ts';
import { ROLES, users } from '../../platform/db/schema/users.ts';
import type { AuthUser } from '../../platform/http/route.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import type { SiteMail } from '../../platform/mail/siteMail.ts';
import { assertUnique, insertUser, presentUser, setPasswordHash, UserLookup, type UserRow } from '../users/userRecords.ts';
import type { UserView } from '../users/schemas.ts';
import { LoginThrottle } from './loginThrottle.ts';
import { SendBudget } from './sendBudget.ts';
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
  /** Site name, language and link base of the code mails (plain English "EMS" mails without it). */
  siteMail?: () => SiteMail;
  sendBudget?: SendBudget;
};

export class AuthService {
  readonly keys: SigningKeys;
  readonly refreshTokens: RefreshTokens;
  readonly codes: VerificationCodes;
  readonly throttle: LoginThrottle;
  readonly sendBudget: SendBudget;
  readonly users: UserLookup;
  private readonly db: Db;
  private readonly logger: Logger;
  private readonly mailer: Mailer;
  private readonly codeTtlSec: number;
  private readonly siteMail: (() => SiteMail) | undefined;
  private readonly touchLogin;

  constructor(options: AuthServiceOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.mailer = options.mailer;
    this.codeTtlSec = options.codeTtlSec;
    this.siteMail = options.siteMail;
    this.keys = new SigningKeys(options.db, options.jwtSecret, options.accessTokenTtlSec);
    this.refreshTokens = new RefreshTokens(options.db, options.refreshTokenTtlSec);
    this.codes = new VerificationCodes(options.codeTtlSec * 1000);
    this.sendBudget = options.sendBudget ?? new SendBudget();
    // The name as typed only when it named an account (never a password typed into the name field by mistake).
    this.throttle = new LoginThrottle(options.db, Date.now, ({ what, key, login, address, retryAfterSec }) =>
      options.logger.warn(
        { lockout: what, key, login: key.startsWith('user:') ? login : undefined, ip: address, retryAfterSec },
        `sign-in locked out for this ${what}: too many failed password checks`,
      ),
    );
    this.users = new UserLookup(options.db);
    // A sign-in is not an edit of the account: updated_at stays (drizzle would set it to the time of preparing).
    this.touchLogin = options.db.orm
      .update(users)
      .set({ lastLoginAt: slot('now'), updatedAt: sql`${users.updatedAt}` })
      .where(eq(users.id, sql.placeholder('id')))
      .prepare();
  }

  /** The user behind a bearer token, re-read on every call so deletions and role changes apply at once. */
  userFromAccessToken(token: string): AuthUser | undefined {
    const claims = this.keys.verify(token);
    if (!claims) return undefined;
    return this.users.authUser(claims.userId);
  }

  /** As userFromAccessToken, but 'expired' for a token this service signed whose time is up (a refresh can help). */
  checkAccessToken(token: string): AuthUser | 'expired' | undefined {
    const claims = this.keys.check(token);
    if (claims === 'expired') return 'expired';
    return claims ? this.users.authUser(claims.userId) : undefined;
  }

  /** Issues the service's own pair; any earlier refresh token of the user is deleted first. */
  signIn(user: UserRow): SignedIn {
    const refreshToken = this.refreshTokens.issue(user.id);
    const now = new Date().toISOString();
    this.touchLogin.run({ now, id: user.id });
    return { accessToken: this.keys.sign({ userId: user.id, username: user.username }), refreshToken, user: presentUser({ ...user, lastLoginAt: now }) };
  }

  /**
   * Username-or-email and password; the same 401 for an unknown user and a wrong password. The check is reserved
   * against the throttle before bcrypt runs, so requests in flight at once cannot each get a free guess.
   */
  async verifyCredentials(login: string, password: string, address: string): Promise<UserRow> {
    const user = this.users.findByLogin(login);
    const attempt = this.throttle.reserve(user?.id, login, address);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) throw new Unauthorized(WRONG_CREDENTIALS);
    attempt.succeeded();
    return user;
  }

  async login(login: string, password: string, address: string): Promise<SignedIn> {
    const user = await this.verifyCredentials(login, password, address);
    // The user may have been deleted while bcrypt ran.
    const current = this.users.findById(user.id);
    if (!current) throw new Unauthorized(WRONG_CREDENTIALS);
    return this.signIn(current);
  }

  /** `client`: the caller's address and User-Agent (a concurrent refresh's grace holds only for the same client). */
  refresh(refreshToken: string, client: string): TokenPair {
    const outcome = this.refreshTokens.rotate(refreshToken, client);
    if (outcome && 'reused' in outcome) {
      this.logger.warn({ userId: outcome.reused }, 'a refresh token was used again after its rotation: the session is ended (sign in again)');
      throw new Unauthorized('Refresh token is invalid or expired; sign in again');
    }
    const rotated = outcome;
    const user = rotated && this.users.findById(rotated.userId);
    if (!rotated || !user) throw new Unauthorized('Refresh token is invalid or expired; sign in again');
    return { accessToken: this.keys.sign({ userId: user.id, username: user.username }), refreshToken: rotated.token };
  }

  logout(userId: number): void {
    this.refreshTokens.revokeForUser(userId);
  }

  private async sendCode(email: string, purpose: CodePurpose): Promise<void> {
    this.codes.issue(email, purpose);
    await this.deliverIssued(email, purpose);
  }

  private async deliverIssued(email: string, purpose: CodePurpose): Promise<void> {
    const code = this.codes.peek(email, purpose);
    if (code === undefined) return;
    const minutes = Math.round(this.codeTtlSec / 60);
    let subject = purpose === 'register' ? 'Your EMS registration code' : 'Your EMS password reset code';
    let text = `Your EMS ${purpose === 'register' ? 'registration' : 'password reset'} code is ${code}.\nIt is valid for ${minutes} minute${minutes === 1 ? '' : 's'} and can be used once.\nIf you did not ask for it, ignore this message.`;
    const site = this.siteMail?.();
    if (site) {
      subject = site.t(`mail.code.subject.${purpose}`, { site: site.site });
      text = `${site.t(`mail.code.body.${purpose}`, { site: site.site, code })}\n${site.t('mail.code.validity', { minutes })}\n\n${site.footer}`;
    }
    try {
      await this.mailer.send({ to: email, subject, text }, { code, purpose });
    } catch (error) {
      this.codes.withdraw(email, purpose);
      this.logger.error({ err: { message: (error as Error).message }, purpose }, 'could not send a verification code');
      throw new BadGateway('The verification email could not be sent; try again later');
    }
  }

  async sendRegisterCode(email: string, address: string): Promise<void> {
    if (this.users.findByEmail(email)) throw new Conflict('That email is already registered');
    this.codes.assertCanSend(email, 'register');
    this.sendBudget.take(address);
    await this.sendCode(email, 'register');
  }

  /**
   * Answers the same, at the same speed, whether or not the email exists: a repeat within the minute is 429 for both,
   * and the mail goes out after the answer (a failed send is logged and its code withdrawn, not reported).
   */
  sendResetCode(email: string, address: string): void {
    this.codes.assertCanSend(email, 'reset');
    this.sendBudget.take(address);
    if (!this.users.findByEmail(email)) {
      this.codes.markSent(email, 'reset');
      return;
    }
    this.codes.issue(email, 'reset');
    // Issued synchronously above (so a repeat is refused at once); the mail itself is not awaited.
    this.deliverIssued(email, 'reset').catch(() => {});
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

  /**
   * A reset ends the user's session: the refresh token is deleted with the new hash, in one transaction (issue 56,
   * OWASP ASVS 3.3; SPEC.md Authentication rule 4 kept it). Access tokens already issued live out their short TTL.
   */
  async resetPassword(input: { email: string; code: string; newPassword: string }): Promise<void> {
    assertPasswordLength(input.newPassword, 'newPassword');
    this.codes.check(input.email, 'reset', input.code);
    const passwordHash = await hashPassword(input.newPassword);
    this.codes.consume(input.email, 'reset', input.code);
    const user = this.users.findByEmail(input.email);
    if (!user) throw new BadRequest('Invalid or expired verification code');
    this.db.sqlite.transaction(() => {
      setPasswordHash(this.db, user.id, passwordHash);
      this.refreshTokens.revokeForUser(user.id);
    })();
  }

  /**
   * A new pair for the device that just changed its own password (the change deleted the user's refresh token, so
   * every other device must sign in again). Not a sign-in: the last sign-in time is left alone.
   */
  renewSession(userId: number): TokenPair | undefined {
    const user = this.users.findById(userId);
    if (!user) return undefined;
    return { accessToken: this.keys.sign({ userId: user.id, username: user.username }), refreshToken: this.refreshTokens.issue(user.id) };
  }
}
