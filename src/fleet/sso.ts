// Single sign-on to the fleet app with the organisation's OpenID Connect issuer (issue 55 item 5), through the box's own
// provider code (src/access/oauth/oidc.ts: discovery, code + PKCE S256 + nonce, the id_token checked against the
// issuer's JWKS). The state, verifier and nonce wait in PostgreSQL for 10 minutes, so the issuer's redirect may reach
// any instance. A user signs in when the issuer's subject is theirs, or, the first time, when the issuer's verified
// email is the one an admin gave them (their invitation then closes); nobody is created by signing in.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { OidcProvider } from '../access/index.ts';
import type { Logger } from '../platform/logger.ts';
import { createSession } from './people.ts';

export type FleetSsoConfig = { issuer: string; clientId: string; clientSecret: string; displayName: string; publicUrl: string };

export const SSO_CALLBACK_PATH = '/api/fleet/auth/sso/callback';
const REQUEST_MINUTES = 10;

export class FleetSso {
  private readonly provider: OidcProvider;

  constructor(
    private readonly config: FleetSsoConfig,
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
  ) {
    this.provider = new OidcProvider(
      { issuer: config.issuer, clientId: config.clientId, clientSecret: config.clientSecret, displayName: config.displayName },
      logger,
    );
  }

  get displayName(): string {
    return this.config.displayName;
  }

  private get redirectUri(): string {
    return new URL(SSO_CALLBACK_PATH, this.config.publicUrl).href;
  }

  /** Where the browser goes to sign in at the issuer. */
  async start(): Promise<string> {
    const request = {
      state: randomBytes(24).toString('base64url'),
      codeVerifier: randomBytes(48).toString('base64url'),
      nonce: randomBytes(24).toString('base64url'),
    };
    await this.pool.query(`delete from fleet_sso_requests where created_at < now() - make_interval(mins => $1)`, [REQUEST_MINUTES]);
    await this.pool.query('insert into fleet_sso_requests (state, code_verifier, nonce) values ($1, $2, $3)', [
      request.state,
      request.codeVerifier,
      request.nonce,
    ]);
    return this.provider.authorizationUrl({ ...request, redirectUri: this.redirectUri });
  }

  /**
   * The issuer's redirect back: a session token, or the reason there is none (`sso_failed`: the state is unknown or
   * old, or the issuer refused; `sso_unknown_user`: nobody at the fleet has this subject or email).
   */
  async finish(query: Record<string, unknown>): Promise<{ token: string } | { error: 'sso_failed' | 'sso_unknown_user' }> {
    const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
    const state = text('state');
    const code = text('code');
    if (!state || !code || state.length > 256 || code.length > 2048) return { error: 'sso_failed' };
    // Used once: the row goes whatever the exchange answers.
    const taken = await this.pool.query<{ code_verifier: string; nonce: string }>(
      `delete from fleet_sso_requests where state = $1 and created_at > now() - make_interval(mins => $2) returning code_verifier, nonce`,
      [state, REQUEST_MINUTES],
    );
    const request = taken.rows[0];
    if (!request) return { error: 'sso_failed' };
    let profile: { providerUserId: string; email?: string };
    try {
      profile = await this.provider.exchange({
        state,
        code,
        iss: text('iss'),
        codeVerifier: request.code_verifier,
        nonce: request.nonce,
        redirectUri: this.redirectUri,
      });
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'fleet single sign-on failed');
      return { error: 'sso_failed' };
    }
    const user = await this.pool.query<{ id: string }>(
      `update fleet_users set oidc_subject = $1, invitation_hash = null, invitation_expires_at = null
       where id = coalesce((select id from fleet_users where oidc_subject = $1),
                           (select id from fleet_users where oidc_subject is null and $2::text is not null and lower(email) = lower($2::text)))
       returning id`,
      [profile.providerUserId, profile.email ?? null],
    );
    if (!user.rows[0]) {
      this.logger.warn({ email: profile.email ?? null }, 'fleet single sign-on by someone who is not a fleet user');
      return { error: 'sso_unknown_user' };
    }
    return { token: (await createSession(this.pool, Number(user.rows[0].id))).token };
  }
}
