// Provider `github`: the OAuth 2.0 web flow, the profile from {api}/user and the primary verified address from {api}/user/emails.
import type { GithubProviderConfig } from '../../platform/config.ts';
import { BadGateway } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { buildProfile, openidClient, PROVIDER_TIMEOUT_MS, type AuthorizationRequest, type CodeExchange, type OAuthProvider } from './providers.ts';
import type { ProviderProfile } from './schemas.ts';

const SCOPE = 'read:user user:email';
const UNREACHABLE = 'GitHub could not be reached; try again later';

type GithubUser = { id: number; login: string; name?: string | null; email?: string | null };
type GithubEmail = { email: string; primary: boolean; verified: boolean };

export class GithubProvider implements OAuthProvider {
  readonly name = 'github' as const;
  readonly displayName = 'GitHub';

  constructor(
    private readonly config: GithubProviderConfig,
    private readonly logger: Logger,
  ) {}

  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    const url = new URL(this.config.authorizeUrl);
    url.searchParams.set('client_id', this.config.clientId);
    url.searchParams.set('redirect_uri', request.redirectUri);
    url.searchParams.set('scope', SCOPE);
    url.searchParams.set('state', request.state);
    // GitHub accepts PKCE on OAuth apps; it costs nothing and protects a leaked code.
    url.searchParams.set('code_challenge', await (await openidClient()).calculatePKCECodeChallenge(request.codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return url.href;
  }

  async exchange(exchange: CodeExchange): Promise<ProviderProfile> {
    const accessToken = await this.accessToken(exchange);
    const user = await this.api<GithubUser>('/user', accessToken);
    if (!user || typeof user.id !== 'number' || typeof user.login !== 'string') {
      throw this.failure('GitHub answered the profile request with an unexpected body');
    }
    const email = await this.primaryVerifiedEmail(accessToken);
    return buildProfile('github', String(user.id), { username: user.login, email, name: user.name ?? undefined });
  }

  private async accessToken(exchange: CodeExchange): Promise<string> {
    const body = new URLSearchParams({
      client_id: this.config.clientId,
      client_secret: this.config.clientSecret,
      code: exchange.code,
      redirect_uri: exchange.redirectUri,
      code_verifier: exchange.codeVerifier,
    });
    const response = await this.call(this.config.tokenUrl, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    const payload = await this.json<{ access_token?: unknown; error?: unknown }>(response);
    // GitHub reports a bad or expired code as 200 with { error }.
    if (typeof payload?.error === 'string') throw this.failure(`GitHub refused the sign-in (${payload.error.slice(0, 64)})`);
    if (!response.ok || typeof payload?.access_token !== 'string') throw this.failure(`GitHub token endpoint answered ${response.status}`);
    return payload.access_token;
  }

  /** Only a primary, verified address is offered as the account email; without one the user types it at register-and-bind. */
  private async primaryVerifiedEmail(accessToken: string): Promise<string | undefined> {
    const response = await this.call(`${this.config.apiUrl}/user/emails`, { headers: this.apiHeaders(accessToken) });
    // A token without the email scope (or a GitHub App without the permission) gets 401/403/404: no email, not a failure.
    if ([401, 403, 404].includes(response.status)) {
      await response.body?.cancel();
      return undefined;
    }
    const emails = await this.json<GithubEmail[]>(response);
    if (!response.ok || !Array.isArray(emails)) throw this.failure(`GitHub emails API answered ${response.status}`);
    return emails.find((entry) => entry && entry.primary === true && entry.verified === true)?.email;
  }

  private async api<T>(path: string, accessToken: string): Promise<T> {
    const response = await this.call(`${this.config.apiUrl}${path}`, { headers: this.apiHeaders(accessToken) });
    const body = await this.json<T>(response);
    if (!response.ok) throw this.failure(`GitHub API ${path} answered ${response.status}`);
    return body;
  }

  private apiHeaders(accessToken: string): Record<string, string> {
    return {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${accessToken}`,
      'user-agent': 'EMS-appliance',
      'x-github-api-version': '2022-11-28',
    };
  }

  private async call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
    } catch (error) {
      this.logger.warn(
        { provider: 'github', url: new URL(url).origin + new URL(url).pathname, err: { message: (error as Error).message } },
        'GitHub request failed',
      );
      throw new BadGateway(UNREACHABLE);
    }
  }

  private async json<T>(response: Response): Promise<T> {
    try {
      return (await response.json()) as T;
    } catch {
      throw this.failure(`GitHub answered ${response.status} with a body that is not JSON`);
    }
  }

  private failure(message: string): BadGateway {
    this.logger.warn({ provider: 'github' }, message);
    return new BadGateway(message);
  }
}
