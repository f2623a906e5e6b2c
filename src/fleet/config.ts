// The fleet service's settings, read once at start; a bad value stops it with one line naming the variable.
export type FleetConfig = {
  databaseUrl: string;
  /** A streaming replica the portfolio is read from (EMS_FLEET_READ_DATABASE_URL); null: everything on the primary. */
  readDatabaseUrl: string | null;
  /** Connections of the read pool (portfolio pages and exports) when a replica is configured. */
  readPoolSize: number;
  host: string;
  port: number;
  tls: { certFile: string; keyFile: string } | null;
  /** Batches one instance stores at once; more get 429 with Retry-After (each holds a PostgreSQL connection). */
  maxConcurrentIngests: number;
  poolSize: number;
  logLevel: string;
  /** Single sign-on (EMS_FLEET_OIDC_ISSUER, _CLIENT_ID, _CLIENT_SECRET, _NAME and EMS_FLEET_PUBLIC_URL); null: off. */
  sso: { issuer: string; clientId: string; clientSecret: string; displayName: string; publicUrl: string } | null;
  /** EMS_FLEET_KEEP_RAW_MONTHS: raw intervals kept for the current month and this many before (dropped at start and daily); null: all. */
  keepRawMonths: number | null;
};

export class FleetConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new FleetConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function parsable(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

export function loadFleetConfig(env: NodeJS.ProcessEnv = process.env): FleetConfig {
  const databaseUrl = env.EMS_FLEET_DATABASE_URL;
  if (!databaseUrl) throw new FleetConfigError('EMS_FLEET_DATABASE_URL is required (a PostgreSQL URL, e.g. postgresql://ems@db.example/ems_fleet)');
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new FleetConfigError('EMS_FLEET_DATABASE_URL must start with postgresql://');
  const readDatabaseUrl = env.EMS_FLEET_READ_DATABASE_URL || null;
  if (readDatabaseUrl !== null && !/^postgres(ql)?:\/\//.test(readDatabaseUrl))
    throw new FleetConfigError('EMS_FLEET_READ_DATABASE_URL must start with postgresql:// (a streaming replica of EMS_FLEET_DATABASE_URL)');
  if (readDatabaseUrl !== null && !parsable(readDatabaseUrl)) throw new FleetConfigError('EMS_FLEET_READ_DATABASE_URL is not a valid URL');
  if (!parsable(databaseUrl)) throw new FleetConfigError('EMS_FLEET_DATABASE_URL is not a valid URL');
  const cert = env.EMS_FLEET_TLS_CERT;
  const key = env.EMS_FLEET_TLS_KEY;
  if (Boolean(cert) !== Boolean(key)) throw new FleetConfigError('EMS_FLEET_TLS_CERT and EMS_FLEET_TLS_KEY must be set together');
  const maxConcurrentIngests = integer(env, 'EMS_FLEET_MAX_INGESTS', 4, 1, 64);
  return {
    databaseUrl,
    readDatabaseUrl,
    readPoolSize: integer(env, 'EMS_FLEET_READ_POOL', 4, 1, 64),
    host: env.EMS_FLEET_HOST || '127.0.0.1',
    port: integer(env, 'EMS_FLEET_PORT', 3100, 0, 65535),
    tls: cert && key ? { certFile: cert, keyFile: key } : null,
    maxConcurrentIngests,
    poolSize: maxConcurrentIngests + 4,
    logLevel: env.EMS_LOG_LEVEL || 'info',
    sso: ssoConfig(env),
    keepRawMonths: env.EMS_FLEET_KEEP_RAW_MONTHS ? integer(env, 'EMS_FLEET_KEEP_RAW_MONTHS', 0, 1, 1_200) : null,
  };
}

/** Single sign-on is on when the issuer is set; then the client and the fleet's own public URL (the redirect) are required. */
function ssoConfig(env: NodeJS.ProcessEnv): FleetConfig['sso'] {
  const issuer = env.EMS_FLEET_OIDC_ISSUER;
  if (!issuer) return null;
  if (!parsable(issuer)) throw new FleetConfigError('EMS_FLEET_OIDC_ISSUER is not a valid URL');
  const clientId = env.EMS_FLEET_OIDC_CLIENT_ID;
  const clientSecret = env.EMS_FLEET_OIDC_CLIENT_SECRET;
  if (!clientId || !clientSecret)
    throw new FleetConfigError('EMS_FLEET_OIDC_CLIENT_ID and EMS_FLEET_OIDC_CLIENT_SECRET are required with EMS_FLEET_OIDC_ISSUER');
  const publicUrl = env.EMS_FLEET_PUBLIC_URL;
  if (!publicUrl || !/^https?:\/\//.test(publicUrl) || !parsable(publicUrl))
    throw new FleetConfigError('EMS_FLEET_PUBLIC_URL is required with EMS_FLEET_OIDC_ISSUER: the address people open the fleet at (https://fleet.example.com)');
  return { issuer, clientId, clientSecret, displayName: env.EMS_FLEET_OIDC_NAME || 'Single sign-on', publicUrl };
}
