// Provider sign-in: pending states, the code exchange outcome (linked or bind_required), binding, and the oauth_links rows.
import { randomBytes } from 'node:crypto';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { AuthService, SignedIn } from '../auth/service.ts';
import { DEFAULT_ROLE } from '../auth/service.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { oauthLinks } from '../../platform/db/schema/index.ts';
import { AppError, BadGateway, BadRequest, Conflict, Forbidden, NotFound, Unauthorized } from '../../platform/errors.ts';
import type { AuthUser } from '../../platform/http/route.ts';
import type { Logger } from '../../platform/logger.ts';
import { assertUnique, insertUser, presentUser, type UserRow } from '../users/userRecords.ts';
import { generatePassword } from '../users/service.ts';
import { ExpiringStore } from './expiringStore.ts';
import { GithubProvider } from './github.ts';
import { OidcProvider } from './oidc.ts';
import { openidClient, type OAuthProvider } from './providers.ts';
import { PROVIDER_NAMES, type CallbackOutcome, type OAuthLinkView, type ProviderName, type ProviderProfile } from './schemas.ts';

/** DESIGN.md: state and bind token both live 10 minutes and are single use. */
export const PENDING_TTL_MS = 10 * 60_000;
/** Bounds memory under a flood of unfinished sign-ins; the oldest pending entry gives way first. */
export const MAX_PENDING = 10_000;
/** Pending sign-ins one client address may hold: a flood from one address cannot push out anyone else's. */
export const MAX_PENDING_PER_ADDRESS = 50;
/** Wrong passwords a bind token survives (typos), after which the provider sign-in must be redone. */
export const MAX_BIND_FAILURES = 5;

type PendingAuthorization = { provider: ProviderName; codeVerifier: string; nonce: string };
type PendingBind = { profile: ProviderProfile; failures: number };

export type CallbackParams = { code?: string; state?: string; iss?: string; error?: string; error_description?: string };

const BAD_STATE = 'Invalid, expired or already used sign-in state; start the sign-in again';
const BAD_BIND_TOKEN = 'Invalid, expired or already used bind token; sign in with the provider again';

export type OAuthServiceOptions = { config: Config; db: Db; logger: Logger; auth: AuthService; audit: AuditLog };

export class OAuthService {
  private readonly providers = new Map<ProviderName, OAuthProvider>();
  private readonly states = new ExpiringStore<PendingAuthorization>({ ttlMs: PENDING_TTL_MS, maxEntries: MAX_PENDING, maxPerOwner: MAX_PENDING_PER_ADDRESS });
  private readonly bindTokens = new ExpiringStore<PendingBind>({ ttlMs: PENDING_TTL_MS, maxEntries: MAX_PENDING });
  private readonly config: Config;
  private readonly db: Db;
  private readonly auth: AuthService;
  private readonly audit: AuditLog;
  private readonly statements;

  constructor(options: OAuthServiceOptions) {
    this.config = options.config;
    this.db = options.db;
    this.auth = options.auth;
    this.audit = options.audit;
    const { github, oidc } = options.config.oauth;
    if (github) this.providers.set('github', new GithubProvider(github, options.logger));
    if (oidc) this.providers.set('oidc', new OidcProvider(oidc, options.logger));

    const orm = options.db.orm;
    const columns = { userId: oauthLinks.userId, provider: oauthLinks.provider, providerUserId: oauthLinks.providerUserId, createdAt: oauthLinks.createdAt };
    const ofUser = eq(oauthLinks.userId, sql.placeholder('userId'));
    const ofProvider = eq(oauthLinks.provider, sql.placeholder('provider'));
    this.statements = {
      byIdentity: orm
        .select(columns)
        .from(oauthLinks)
        .where(and(ofProvider, eq(oauthLinks.providerUserId, sql.placeholder('providerUserId'))))
        .prepare(),
      byUserProvider: orm.select(columns).from(oauthLinks).where(and(ofUser, ofProvider)).prepare(),
      pageForUser: orm
        .select(columns)
        .from(oauthLinks)
        .where(ofUser)
        .orderBy(desc(oauthLinks.createdAt), desc(oauthLinks.id))
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset'))
        .prepare(),
      countForUser: orm.select({ n: count() }).from(oauthLinks).where(ofUser).prepare(),
      insert: orm
        .insert(oauthLinks)
        .values({
          userId: sql.placeholder('userId'),
          provider: sql.placeholder('provider'),
          providerUserId: sql.placeholder('providerUserId'),
          createdAt: sql.placeholder('createdAt'),
        })
        .prepare(),
      remove: orm.delete(oauthLinks).where(and(ofUser, ofProvider)).prepare(),
    };
  }

  /** Configured providers only (SPEC.md Authentication 7), in a stable order. */
  list(): Array<{ name: ProviderName; displayName: string }> {
    return PROVIDER_NAMES.filter((name) => this.providers.has(name)).map((name) => ({ name, displayName: this.providers.get(name)!.displayName }));
  }

  redirectUri(name: ProviderName): string {
    return `${this.config.publicUrl}/api/auth/oauth/${name}/callback`;
  }

  /**
   * Where the popup's postMessage may go: the dashboard's origins (EMS_PORTAL_ORIGIN), else the service's own; never '*'.
   * The popup posts to each: the browser delivers a message only to an opener of that exact origin, so the one matching
   * the opener receives it and no other origin ever does.
   */
  popupTargetOrigins(): string[] {
    return this.config.portalOrigins.length > 0 ? this.config.portalOrigins : [new URL(this.config.publicUrl).origin];
  }

  async authorize(providerName: string, address: string): Promise<string> {
    const provider = this.provider(providerName);
    const { randomNonce, randomPKCECodeVerifier, randomState } = await openidClient();
    const state = randomState();
    const pending: PendingAuthorization = { provider: provider.name, codeVerifier: randomPKCECodeVerifier(), nonce: randomNonce() };
    // Built before the state is stored: an issuer that is down leaves nothing behind.
    const url = await provider.authorizationUrl({
      state,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
      redirectUri: this.redirectUri(provider.name),
    });
    this.states.set(state, pending, address);
    return url;
  }

  async callback(providerName: string, params: CallbackParams): Promise<CallbackOutcome> {
    const provider = this.provider(providerName);
    // Taken, not read: a state is spent by its first callback whatever happens next, so a replay is always refused.
    const pending = params.state ? this.states.take(params.state) : undefined;
    if (!pending || pending.provider !== provider.name) throw new BadRequest(BAD_STATE);
    if (params.error) {
      throw new BadGateway(`${provider.displayName} did not complete the sign-in (${params.error.slice(0, 64)})`);
    }
    if (!params.code) throw new BadRequest('The callback carries no authorization code');

    const profile = await provider.exchange({
      code: params.code,
      iss: params.iss,
      state: params.state!,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
      redirectUri: this.redirectUri(provider.name),
    });

    const link = this.statements.byIdentity.get({ provider: profile.provider, providerUserId: profile.providerUserId });
    const user = link && this.auth.users.findById(link.userId);
    if (user) return { status: 'linked', ...this.auth.signIn(user) };

    const bindToken = randomBytes(32).toString('base64url');
    this.bindTokens.set(bindToken, { profile, failures: 0 });
    return { status: 'bind_required', bindToken, profile };
  }

  /** Links the provider identity to an existing account after its username-or-email and password check out. */
  async bind(input: { bindToken: string; username: string; password: string }, address: string): Promise<SignedIn> {
    const pending = this.bindTokens.peek(input.bindToken);
    if (!pending) throw new BadRequest(BAD_BIND_TOKEN);
    // A password check like login: the same throttle, reserved before bcrypt, so bind is no way around it.
    let user: UserRow;
    try {
      user = await this.auth.verifyCredentials(input.username, input.password, address);
    } catch (error) {
      if (error instanceof Unauthorized) {
        pending.failures += 1;
        if (pending.failures >= MAX_BIND_FAILURES) this.bindTokens.delete(input.bindToken);
      }
      throw error;
    }
    this.assertLinkable(user.id, pending.profile);
    // Taken only now, after the await: of two concurrent binds with one token exactly one gets here with it.
    if (!this.bindTokens.take(input.bindToken)) throw new BadRequest(BAD_BIND_TOKEN);

    return this.db.sqlite.transaction(() => {
      const current = this.auth.users.findById(user.id);
      if (!current) throw new BadRequest('The account was removed while binding');
      this.link(current, pending.profile, current);
      return this.auth.signIn(current);
    })();
  }

  /** Creates an account from the provider profile (body fields override it) with the default role, then links it. */
  async registerAndBind(input: { bindToken: string; username?: string; email?: string }): Promise<SignedIn> {
    const pending = this.bindTokens.peek(input.bindToken);
    if (!pending) throw new BadRequest(BAD_BIND_TOKEN);
    const { profile } = pending;
    const username = input.username ?? profile.username;
    const email = input.email ?? profile.email;
    if (!username) throw new BadRequest('Invalid body', [{ path: 'body.username', message: 'is required: the provider gave no usable username' }]);
    if (!email) throw new BadRequest('Invalid body', [{ path: 'body.email', message: 'is required: the provider gave no verified email' }]);
    this.assertFree(username, email);
    this.assertLinkable(undefined, profile);
    // Nobody knows this password: the account signs in through the provider, or sets one with forgot-password.
    const passwordHash = await hashPassword(generatePassword());
    if (!this.bindTokens.take(input.bindToken)) throw new BadRequest(BAD_BIND_TOKEN);

    return this.db.sqlite.transaction(() => {
      this.assertFree(username, email);
      const user = insertUser(this.db, { username, email, passwordHash, role: DEFAULT_ROLE, displayName: profile.name ?? null });
      this.audit.record({ actor: user, action: 'create', resource: 'users', resourceId: user.id, after: { ...presentUser(user), via: profile.provider } });
      this.link(user, profile, user);
      return this.auth.signIn(user);
    })();
  }

  listLinks(caller: AuthUser, userId: number, page: number, pageSize: number): { items: OAuthLinkView[]; total: number; page: number; pageSize: number } {
    this.assertSelfOrAdmin(caller, userId);
    const rows = this.statements.pageForUser.all({ userId, limit: pageSize, offset: (page - 1) * pageSize });
    const total = this.statements.countForUser.get({ userId })?.n ?? 0;
    return { items: rows.map(({ provider, providerUserId, createdAt }) => ({ provider, providerUserId, createdAt })), total, page, pageSize };
  }

  unlink(caller: AuthUser, userId: number, provider: string): void {
    this.assertSelfOrAdmin(caller, userId);
    this.db.sqlite.transaction(() => {
      const link = this.statements.byUserProvider.get({ userId, provider });
      if (!link) throw new NotFound(`No ${provider} sign-in is linked to this user`);
      this.statements.remove.run({ userId, provider });
      this.audit.record({
        actor: caller,
        action: 'oauth_unlink',
        resource: 'users',
        resourceId: userId,
        before: { provider: link.provider, providerUserId: link.providerUserId },
      });
    })();
  }

  private provider(name: string): OAuthProvider {
    const provider = this.providers.get(name as ProviderName);
    if (!provider) throw new NotFound(`Unknown or unconfigured sign-in provider: ${name.slice(0, 32)}`);
    return provider;
  }

  private assertSelfOrAdmin(caller: AuthUser, userId: number): void {
    if (caller.id !== userId && caller.role !== 'admin') throw new Forbidden('Only the user themself or an admin can manage sign-in links');
    if (caller.id !== userId && !this.auth.users.findById(userId)) throw new NotFound('User not found');
  }

  /** One provider identity links to one user; a user links one identity per provider (both are unique indexes too). */
  private assertLinkable(userId: number | undefined, profile: ProviderProfile): void {
    const existing = this.statements.byIdentity.get({ provider: profile.provider, providerUserId: profile.providerUserId });
    if (existing) {
      if (existing.userId === userId) return;
      throw new Conflict(`This ${this.displayName(profile.provider)} account is already linked to another user`);
    }
    if (userId !== undefined && this.statements.byUserProvider.get({ userId, provider: profile.provider })) {
      throw new Conflict(`This user is already linked to a different ${this.displayName(profile.provider)} account; unlink it first`);
    }
  }

  private assertFree(username: string, email: string): void {
    try {
      assertUnique(this.db, username, email);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'CONFLICT') throw error;
      const hint = error.message.includes('username')
        ? 'choose another username, or use bind to link the existing account with its password'
        : 'choose another email, or use bind to link the existing account with its password';
      throw new Conflict(`${error.message}: ${hint}`);
    }
  }

  /** Inside the caller's transaction: the link row and its audit entry land together. */
  private link(user: UserRow, profile: ProviderProfile, actor: Pick<UserRow, 'id' | 'username'>): void {
    this.assertLinkable(user.id, profile);
    if (this.statements.byIdentity.get({ provider: profile.provider, providerUserId: profile.providerUserId })) return;
    this.statements.insert.run({ userId: user.id, provider: profile.provider, providerUserId: profile.providerUserId, createdAt: new Date().toISOString() });
    this.audit.record({
      actor,
      action: 'oauth_link',
      resource: 'users',
      resourceId: user.id,
      after: { provider: profile.provider, providerUserId: profile.providerUserId },
    });
  }

  private displayName(name: ProviderName): string {
    return this.providers.get(name)?.displayName ?? name;
  }
}
