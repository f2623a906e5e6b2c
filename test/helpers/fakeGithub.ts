// A GitHub-shaped OAuth server over real HTTP on 127.0.0.1: authorize redirect, code → token (with PKCE), /user, /user/emails.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeGithubUser = {
  id: number;
  login: string;
  name?: string | null;
  emails?: Array<{ email: string; primary: boolean; verified: boolean }>;
};

export type FakeGithub = {
  url: string;
  /** EMS_OAUTH_GITHUB_* settings pointing at this fake. */
  env: Record<string, string>;
  clientId: string;
  clientSecret: string;
  /** The account the "browser" is signed in to at GitHub: the next authorize issues a code for it. */
  signInAs(user: FakeGithubUser): void;
  /** Make the next request to a path answer this status with a non-JSON body. */
  failNext(path: '/login/oauth/access_token' | '/user' | '/user/emails', status: number): void;
  /** Form bodies the token endpoint received, newest last. */
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
};

type IssuedCode = { user: FakeGithubUser; redirectUri: string; challenge?: string; method?: string };

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startFakeGithub(): Promise<FakeGithub> {
  const clientId = `gh-client-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(16).toString('hex');
  const codes = new Map<string, IssuedCode>();
  const tokens = new Map<string, FakeGithubUser>();
  const failures = new Map<string, number>();
  const tokenRequests: URLSearchParams[] = [];
  let current: FakeGithubUser | undefined;

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const failure = failures.get(url.pathname);
    if (failure !== undefined) {
      failures.delete(url.pathname);
      res.writeHead(failure, { 'content-type': 'text/html' });
      res.end('<h1>Unicorn!</h1>');
      return;
    }

    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const redirectUri = url.searchParams.get('redirect_uri');
      if (url.searchParams.get('client_id') !== clientId || !redirectUri || !current) return json(res, 400, { error: 'bad authorize request' });
      const code = randomBytes(10).toString('hex');
      codes.set(code, {
        user: current,
        redirectUri,
        challenge: url.searchParams.get('code_challenge') ?? undefined,
        method: url.searchParams.get('code_challenge_method') ?? undefined,
      });
      const target = new URL(redirectUri);
      target.searchParams.set('code', code);
      target.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: target.href });
      res.end();
      return;
    }

    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(await readBody(req));
      tokenRequests.push(form);
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' });
      const code = form.get('code') ?? '';
      const issued = codes.get(code);
      codes.delete(code);
      if (!issued || issued.redirectUri !== form.get('redirect_uri')) return json(res, 200, { error: 'bad_verification_code' });
      if (issued.challenge) {
        const verifier = form.get('code_verifier') ?? '';
        const expected = issued.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (expected !== issued.challenge) return json(res, 200, { error: 'bad_verification_code' });
      }
      const token = `gho_${randomBytes(16).toString('hex')}`;
      tokens.set(token, issued.user);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const user = bearer ? tokens.get(bearer) : undefined;
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/user') {
        const primary = user.emails?.find((entry) => entry.primary);
        return json(res, 200, { id: user.id, login: user.login, name: user.name ?? null, email: primary?.email ?? null });
      }
      return json(
        res,
        200,
        (user.emails ?? []).map((entry) => ({ ...entry, visibility: entry.primary ? 'private' : null })),
      );
    }
    json(res, 404, { message: 'Not Found' });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    clientId,
    clientSecret,
    env: {
      EMS_OAUTH_GITHUB_CLIENT_ID: clientId,
      EMS_OAUTH_GITHUB_CLIENT_SECRET: clientSecret,
      EMS_OAUTH_GITHUB_AUTHORIZE_URL: `${url}/login/oauth/authorize`,
      EMS_OAUTH_GITHUB_TOKEN_URL: `${url}/login/oauth/access_token`,
      EMS_OAUTH_GITHUB_API_URL: url,
    },
    tokenRequests,
    signInAs(user) {
      current = user;
    },
    failNext(path, status) {
      failures.set(path, status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
