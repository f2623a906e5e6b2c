// Provider `oidc`: any OpenID Connect issuer through discovery; code + PKCE (S256) + nonce, the id_token checked against the issuer's JWKS.
import type * as OpenId from 'openid-client';
import type { OidcProviderConfig } from '../../platform/config.ts';
import { BadGateway } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import {
  buildProfile,
  openidClient,
  openidIfLoaded,
  PROVIDER_TIMEOUT_MS,
  type AuthorizationRequest,
  type CodeExchange,
  type OAuthProvider,
} from './providers.ts';
import type { ProviderProfile } from './schemas.ts';

const SCOPE = 'openid profile email';
const UNREACHABLE = 'The sign-in provider could not be reached; try again later';
const ID_TOKEN_REJECTED = "The sign-in provider's ID token failed verification";

/** oauth4webapi codes raised when the id_token (signature, iss, aud, exp, nonce) or the token response does not check out. */
const VERIFICATION_CODES = new Set([
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_INVALID_RESPONSE',
  'OAUTH_KEY_SELECTION_FAILED',
  'OAUTH_PARSE_ERROR',
]);

export class OidcProvider implements OAuthProvider {
  readonly name = 'oidc' as const;
  readonly displayName: string;
  private discovered: Promise<OpenId.Configuration> | undefined;
  private warnedInsecure = false;

  constructor(
    private readonly config: OidcProviderConfig,
    private readonly logger: Logger,
  ) {
    this.displayName = config.displayName;
  }

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    const configuration = await this.configuration();
    const client = await openidClient();
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: request.redirectUri,
      scope: SCOPE,
      state: request.state,
      nonce: request.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    });
    return url.href;
  }

  async exchange(exchange: CodeExchange): Promise<ProviderProfile> {
    const configuration = await this.configuration();
    const client = await openidClient();
    const callbackUrl = new URL(exchange.redirectUri);
    callbackUrl.searchParams.set('code', exchange.code);
    callbackUrl.searchParams.set('state', exchange.state);
    if (exchange.iss) callbackUrl.searchParams.set('iss', exchange.iss);

    let tokens: Awaited<ReturnType<typeof OpenId.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: exchange.codeVerifier,
        expectedState: exchange.state,
        expectedNonce: exchange.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.translate(error, 'token exchange');
    }
    const claims = tokens.claims();
    if (!claims) throw new BadGateway(ID_TOKEN_REJECTED);

    // The id_token is the verified source of `sub`; userinfo often carries the friendlier fields.
    let info: Record<string, unknown> = {};
    if (configuration.serverMetadata().userinfo_endpoint) {
      try {
        info = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      } catch (error) {
        throw this.translate(error, 'userinfo');
      }
    }
    const field = (name: string): unknown => info[name] ?? claims[name];
    // An address the issuer says is unverified is not offered as the account email.
    const emailVerified = field('email_verified');
    const email = emailVerified === false || emailVerified === 'false' ? undefined : field('email');
    const given = [field('given_name'), field('family_name')].filter((part) => typeof part === 'string').join(' ');
    return buildProfile('oidc', claims.sub, {
      username: field('preferred_username') ?? email,
      email,
      name: field('name') ?? given,
    });
  }

  /**
   * Discovery runs on first use, not at start: the service must come up while the issuer is down.
   * A failed discovery is not cached, so the next sign-in tries again.
   */
  private configuration(): Promise<OpenId.Configuration> {
    this.discovered ??= this.discover().catch((error: unknown) => {
      this.discovered = undefined;
      throw error;
    });
    return this.discovered;
  }

  private async discover(): Promise<OpenId.Configuration> {
    const client = await openidClient();
    const issuer = new URL(this.config.issuer);
    // Signature checks against the JWKS are off by default in openid-client (it trusts TLS); SPEC wants them.
    const execute: Array<(configuration: OpenId.Configuration) => void> = [client.enableNonRepudiationChecks];
    if (issuer.protocol === 'http:') {
      // The operator configured a plain-http issuer (a LAN Keycloak, a test issuer): honour it, but say so once.
      execute.unshift(client.allowInsecureRequests);
      if (!this.warnedInsecure) this.logger.warn({ issuer: issuer.href }, 'the OIDC issuer is plain http; use https outside a trusted network');
      this.warnedInsecure = true;
    }
    try {
      return await client.discovery(issuer, this.config.clientId, this.config.clientSecret, undefined, {
        execute,
        timeout: PROVIDER_TIMEOUT_MS / 1000,
      });
    } catch (error) {
      this.logger.warn({ provider: 'oidc', issuer: issuer.href, err: describe(error) }, 'OIDC discovery failed');
      throw new BadGateway(UNREACHABLE);
    }
  }

  private translate(error: unknown, step: string): BadGateway {
    this.logger.warn({ provider: 'oidc', step, err: describe(error) }, 'OIDC sign-in failed');
    // An error of openid-client's own can only come once it is loaded.
    const loaded = openidIfLoaded();
    if (loaded && error instanceof loaded.ResponseBodyError) {
      return new BadGateway(`The sign-in provider refused the sign-in (${String(error.error).slice(0, 64)})`);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && VERIFICATION_CODES.has(code)) return new BadGateway(ID_TOKEN_REJECTED);
    return new BadGateway(UNREACHABLE);
  }
}

/** Message and code only: provider errors can carry request bodies with secrets in their causes. */
function describe(error: unknown): { message: string; code?: string } {
  const { message, code } = error as { message?: string; code?: string };
  return { message: message ?? String(error), ...(typeof code === 'string' ? { code } : {}) };
}
