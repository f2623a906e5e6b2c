// The gateway's bearer token: kept in the iot_gateway_token row (id 1) across restarts, renewed before expiry, one refresh at a time.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { iotGatewayToken } from '../platform/db/schema/index.ts';
import { BadGateway } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { GatewayClient } from './client.ts';

export type TokenRow = { token: string | null; expiresAt: number | null; refreshedAt: number | null };

/** Renew this long before expiry: a tenth of the token's lifetime, at most a minute. */
function renewMarginMs(row: TokenRow): number {
  const lifetime = (row.expiresAt ?? 0) - (row.refreshedAt ?? 0);
  return Math.min(60_000, Math.max(0, lifetime) / 10);
}

export class GatewayTokens {
  private row: TokenRow;
  /** expiresAt minus the margin: past it the token is renewed before use. */
  private renewAt = 0;
  private refreshing: Promise<string> | null = null;
  private readonly save;

  constructor(
    db: Db,
    private readonly client: GatewayClient,
    private readonly credentials: { username: string; password: string },
    private readonly logger: Logger,
  ) {
    const stored = db.orm
      .select({ token: iotGatewayToken.token, expiresAt: iotGatewayToken.expiresAt, refreshedAt: iotGatewayToken.refreshedAt })
      .from(iotGatewayToken)
      .where(eq(iotGatewayToken.id, 1))
      .get();
    this.row = stored ?? { token: null, expiresAt: null, refreshedAt: null };
    this.renewAt = this.row.token && this.row.expiresAt ? this.row.expiresAt - renewMarginMs(this.row) : 0;
    // Upsert: the seed migration creates the row, but a hand-edited database must not lose the token.
    this.save = db.orm
      .insert(iotGatewayToken)
      .values({ id: 1, token: sql.placeholder('token'), expiresAt: sql.placeholder('expiresAt'), refreshedAt: sql.placeholder('refreshedAt') })
      .onConflictDoUpdate({
        target: iotGatewayToken.id,
        set: { token: sql`excluded.token`, expiresAt: sql`excluded.expires_at`, refreshedAt: sql`excluded.refreshed_at` },
      })
      .prepare();
  }

  /** The stored token, as the admin route shows it. */
  current(): Readonly<TokenRow> {
    return this.row;
  }

  /** A token to use now: the stored one while it is fresh, else a new one (shared by every caller waiting for it). */
  valid(): string | Promise<string> {
    if (this.row.token && Date.now() < this.renewAt) return this.row.token;
    return this.refresh();
  }

  /**
   * The gateway answered 401 to `rejected`: renew once. Callers that saw the same rejected token share one
   * refresh; a caller whose token was already replaced just uses the new one.
   */
  afterRejection(rejected: string): string | Promise<string> {
    if (this.refreshing) return this.refreshing;
    if (this.row.token && this.row.token !== rejected && Date.now() < this.renewAt) return this.row.token;
    return this.refresh();
  }

  private refresh(): Promise<string> {
    this.refreshing ??= this.fetchToken().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async fetchToken(): Promise<string> {
    const answer = await this.client.exchange({ method: 'POST', path: '/auth/token', body: this.credentials });
    if (answer.status === 401 || answer.status === 403) {
      this.logger.error({ status: answer.status }, 'IoT gateway refused the service credentials (EMS_IOT_USERNAME / EMS_IOT_PASSWORD)');
      throw new BadGateway('gateway rejected the service credentials');
    }
    const body = answer.json as { token?: unknown; expiresIn?: unknown } | null;
    const token = body?.token;
    const expiresIn = body?.expiresIn;
    if (answer.status !== 200 || typeof token !== 'string' || !token || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      this.logger.error({ status: answer.status }, 'IoT gateway token request failed');
      throw new BadGateway(`IoT gateway token request failed (status ${answer.status})`);
    }
    const now = Date.now();
    const row: TokenRow = { token, expiresAt: now + Math.round(expiresIn * 1000), refreshedAt: now };
    this.save.run(row);
    this.row = row;
    this.renewAt = row.expiresAt! - renewMarginMs(row);
    this.logger.info({ expiresInSec: expiresIn }, 'IoT gateway token renewed');
    return token;
  }
}
