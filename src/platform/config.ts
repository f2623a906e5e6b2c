// Reads every EMS_* setting once at start-up, typed and checked; a bad value stops the process with one line.
import { isIP } from 'node:net';
import path from 'node:path';
import { TOOL_SETTINGS } from './toolSettings.ts';

export type OidcProviderConfig = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  displayName: string;
};

export type GithubProviderConfig = {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  apiUrl: string;
};

export type Config = {
  host: string;
  port: number;
  dataDir: string;
  jwtSecret: string | undefined;
  accessTokenTtlSec: number;
  refreshTokenTtlSec: number;
  codeTtlSec: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  publicUrl: string;
  /** The first of portalOrigins (links in mails); undefined when none is set. */
  portalOrigin: string | undefined;
  /** EMS_PORTAL_ORIGIN: every origin of the web dashboard (CORS; the OAuth popup's postMessage targets). */
  portalOrigins: string[];
  /** Bearer token that opens GET /metrics to a scraper; unset: /metrics answers 404. */
  metricsToken: string | undefined;
  oauth: { github?: GithubProviderConfig; oidc?: OidcProviderConfig };
  iot: { baseUrl: string; username: string; password: string; timeoutMs: number };
  uploadMaxBytes: number;
  /** How often the gateway's alarms are read into alerts; 0 (`off`): not at all. */
  alarmPollIntervalMs: number;
  /** How often the energy collector reads the meters; 0 (`off`): not at all. */
  collectIntervalMs: number;
  /** With the built-in simulator: how many sub-meters it simulates. */
  simMeters: number;
  /** With the built-in simulator: whether it simulates the HVAC plant (air handler, VAV zones, chiller, hot-water loop). */
  simEquipment: boolean;
  /** Fault detection: a rule that would open more faults than this within an hour is paused with an alert. */
  fddFloodPerHour: number;
  /** The live stream (GET /api/events): heartbeat after this long without an event; open streams per user. */
  events: { heartbeatMs: number; perUser: number };
  /** Fleet sync (only while the box is joined: emsctl fleet join): how often it sends, and the most it waits at random before re-sending history after an outage. */
  fleetSync: { intervalMs: number; catchUpDelayMs: number };
  /** JSON and form bodies must arrive within this long (uploads have their own, long, limit). */
  bodyTimeoutMs: number;
  /** Reverse proxies whose X-Forwarded-For is believed; empty: the socket's peer is the client. */
  trustProxy: string[];
  /** PEM certificate (chain) and key to serve HTTPS directly; null: plain HTTP. Read at start and on SIGHUP. */
  tls: { certFile: string; keyFile: string } | null;
  /** minIntervalMin: the shortest gap a plan's cron may leave between two runs (EMS_REPORT_MIN_INTERVAL, 15m). */
  reports: { mailRetryDelaysMs: number[]; keepFilesPerPlan: number; minIntervalMin: number };
  /** A second folder (USB disk, NFS mount) each verified backup is copied to; undefined: backups stay in the data dir only. */
  backupTarget: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** "900", "15m", "7d" → seconds. */
export function parseDuration(value: string): number | undefined {
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * DURATION_UNITS[match[2] || 's'];
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : undefined;
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A comma-separated list of IP addresses (IPv4 or IPv6; an IPv4-mapped IPv6 form is read as IPv4). */
function addressList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const addresses = raw
    .split(',')
    .map((item) => plainAddress(item.trim()))
    .filter((item) => item !== '');
  const bad = addresses.find((address) => isIP(address) === 0);
  if (bad !== undefined) throw new ConfigError(`${name}: "${bad}" is not an IP address (expected a comma-separated list of proxy addresses)`);
  return addresses;
}

export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function duration(env: Env, name: string, fallback: string): number {
  const raw = read(env, name) ?? fallback;
  const seconds = parseDuration(raw);
  if (seconds === undefined) {
    throw new ConfigError(`${name}: expected seconds or a number with s/m/h/d (e.g. 15m), got "${raw}"`);
  }
  return seconds;
}

/**
 * EMS_COLLECT_INTERVAL in ms: `off` is 0, a duration as elsewhere, or whole milliseconds (`42ms`, at least 10) for a clock
 * sped up by libfaketime whose timers run at the real pace (the soak: a minute of its clock is 42 ms at ×1440).
 */
function collectInterval(env: Env): number {
  const raw = read(env, 'EMS_COLLECT_INTERVAL');
  if (raw === 'off') return 0;
  const ms = raw === undefined ? null : /^(\d+)ms$/.exec(raw);
  if (!ms) return duration(env, 'EMS_COLLECT_INTERVAL', '60s') * 1000;
  const value = Number(ms[1]);
  if (!Number.isSafeInteger(value) || value < 10) throw new ConfigError(`EMS_COLLECT_INTERVAL: at least 10ms, got "${raw}"`);
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (raw !== 'on' && raw !== 'off') throw new ConfigError(`${name}: expected on or off, got "${raw}"`);
  return raw === 'on';
}

function url(env: Env, name: string, fallback?: string, keepTrailingSlash = false): string | undefined {
  const raw = read(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  try {
    const parsed = new URL(raw);
    if (!['http:', 'https:', 'smtp:', 'smtps:'].includes(parsed.protocol)) throw new Error('protocol');
  } catch {
    throw new ConfigError(`${name}: expected an absolute URL, got "${raw}"`);
  }
  return keepTrailingSlash ? raw : raw.replace(/\/+$/, '');
}

function origin(env: Env, name: string): string | undefined {
  const raw = url(env, name);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  if (parsed.pathname !== '/' || parsed.search || parsed.hash) {
    throw new ConfigError(`${name}: expected an origin such as https://dashboard.example.lan, got "${raw}"`);
  }
  return parsed.origin;
}

/** A comma-separated list of origins ("https://dash.example.lan,http://localhost:5173"), each checked as origin() does. */
function originList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw new ConfigError(`${name}: an empty item in the list "${raw}"`);
  return [...new Set(items.map((item) => origin({ [name]: item }, name)!))];
}

/** "30s,2m,10m": the waits before each retry of a failed report mail (ms, s, m or h per item). */
function delayList(env: Env, name: string, fallback: string): number[] {
  const raw = read(env, name) ?? fallback;
  if (raw === 'none') return [];
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const delays = raw.split(',').map((item) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(item.trim());
    return match ? Number(match[1]) * units[match[2]] : NaN;
  });
  if (delays.length > 10 || delays.some((delay) => !Number.isSafeInteger(delay) || delay > 86_400_000)) {
    throw new ConfigError(`${name}: expected up to 10 comma-separated waits such as 30s,2m,10m (or "none"), got "${raw}"`);
  }
  return delays;
}

/** An absolute folder path; its existence is checked when it is used (a disk may be plugged in later). */
function absoluteDir(env: Env, name: string): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  if (!path.isAbsolute(raw)) throw new ConfigError(`${name}: expected an absolute folder path such as /mnt/ems-backup, got "${raw}"`);
  return path.normalize(raw).replace(/(.)\/+$/, '$1');
}

/** Both halves of a credential pair, or neither. */
function pair(env: Env, idName: string, secretName: string): [string, string] | undefined {
  const id = read(env, idName);
  const secret = read(env, secretName);
  if (!id && !secret) return undefined;
  if (!id || !secret) throw new ConfigError(`${id ? secretName : idName}: must be set together with ${id ? idName : secretName}`);
  return [id, secret];
}

export function loadConfig(env: Env = process.env): Config {
  const host = read(env, 'EMS_HOST') ?? '127.0.0.1';
  const jwtSecret = read(env, 'EMS_JWT_SECRET');
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < 32) {
    throw new ConfigError('EMS_JWT_SECRET: must be at least 32 bytes long');
  }
  const logLevel = (read(env, 'EMS_LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`EMS_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const mailFrom = read(env, 'EMS_MAIL_FROM') ?? 'EMS <ems@localhost>';

  const oauth: Config['oauth'] = {};
  const github = pair(env, 'EMS_OAUTH_GITHUB_CLIENT_ID', 'EMS_OAUTH_GITHUB_CLIENT_SECRET');
  // Read (and checked) even without a client id: every setting is read on every start, so settingNames() knows it.
  const githubUrls = {
    authorizeUrl: url(env, 'EMS_OAUTH_GITHUB_AUTHORIZE_URL', 'https://github.com/login/oauth/authorize')!,
    tokenUrl: url(env, 'EMS_OAUTH_GITHUB_TOKEN_URL', 'https://github.com/login/oauth/access_token')!,
    apiUrl: url(env, 'EMS_OAUTH_GITHUB_API_URL', 'https://api.github.com')!,
  };
  if (github) oauth.github = { clientId: github[0], clientSecret: github[1], ...githubUrls };
  const oidc = pair(env, 'EMS_OAUTH_OIDC_CLIENT_ID', 'EMS_OAUTH_OIDC_CLIENT_SECRET');
  // An issuer identifier is compared verbatim by OIDC clients: some (Auth0) end in '/'.
  const issuer = url(env, 'EMS_OAUTH_OIDC_ISSUER', undefined, true);
  const oidcName = read(env, 'EMS_OAUTH_OIDC_NAME') ?? 'Single sign-on';
  if (oidc && !issuer) throw new ConfigError('EMS_OAUTH_OIDC_ISSUER: must be set when the OIDC client id and secret are');
  if (oidc && issuer) {
    oauth.oidc = {
      issuer,
      clientId: oidc[0],
      clientSecret: oidc[1],
      displayName: oidcName,
    };
  }

  const tlsFiles = pair(env, 'EMS_TLS_CERT', 'EMS_TLS_KEY');
  const portalOrigins = originList(env, 'EMS_PORTAL_ORIGIN');

  const iotBase = read(env, 'EMS_IOT_BASE_URL') ?? 'sim';
  const iotUsername = read(env, 'EMS_IOT_USERNAME');
  const iotPassword = read(env, 'EMS_IOT_PASSWORD');
  if (iotBase !== 'sim' && (!iotUsername || !iotPassword)) {
    throw new ConfigError('EMS_IOT_USERNAME: EMS_IOT_USERNAME and EMS_IOT_PASSWORD are required when EMS_IOT_BASE_URL points at a real gateway');
  }

  const port = integer(env, 'EMS_PORT', 3000, 0, 65535);
  return {
    host,
    port,
    tls: tlsFiles ? { certFile: path.resolve(tlsFiles[0]), keyFile: path.resolve(tlsFiles[1]) } : null,
    dataDir: path.resolve(read(env, 'EMS_DATA_DIR') ?? './data'),
    jwtSecret,
    accessTokenTtlSec: duration(env, 'EMS_ACCESS_TOKEN_TTL', '15m'),
    refreshTokenTtlSec: duration(env, 'EMS_REFRESH_TOKEN_TTL', '7d'),
    codeTtlSec: duration(env, 'EMS_CODE_TTL', '5m'),
    smtpUrl: url(env, 'EMS_SMTP_URL'),
    mailFrom,
    // Unset, it follows EMS_PORT and the scheme (EMS_PORT=8080 → http://localhost:8080): a redirect URI must reach this
    // port. Port 0 (any free port, tests) is not known yet here: 3000 stands in.
    publicUrl: url(env, 'EMS_PUBLIC_URL', `${tlsFiles ? 'https' : 'http'}://localhost:${port || 3000}`)!,
    portalOrigins,
    portalOrigin: portalOrigins[0],
    metricsToken: metricsToken(env),
    oauth,
    iot: {
      baseUrl: iotBase === 'sim' ? 'sim' : url(env, 'EMS_IOT_BASE_URL')!,
      username: iotUsername ?? 'ems',
      password: iotPassword ?? 'ems-simulator',
      timeoutMs: integer(env, 'EMS_IOT_TIMEOUT_MS', 10000, 100, 600000),
    },
    uploadMaxBytes: integer(env, 'EMS_UPLOAD_MAX_BYTES', 104857600, 1, Number.MAX_SAFE_INTEGER),
    bodyTimeoutMs: duration(env, 'EMS_BODY_TIMEOUT', '30s') * 1000,
    alarmPollIntervalMs: read(env, 'EMS_ALARM_POLL_INTERVAL') === 'off' ? 0 : duration(env, 'EMS_ALARM_POLL_INTERVAL', '15s') * 1000,
    trustProxy: addressList(env, 'EMS_TRUST_PROXY'),
    collectIntervalMs: collectInterval(env),
    simMeters: integer(env, 'EMS_SIM_METERS', 3, 0, 2000),
    simEquipment: onOff(env, 'EMS_SIM_EQUIPMENT', false),
    fddFloodPerHour: integer(env, 'EMS_FDD_FLOOD_PER_HOUR', 20, 1, 10_000),
    events: { heartbeatMs: duration(env, 'EMS_EVENTS_HEARTBEAT', '15s') * 1000, perUser: integer(env, 'EMS_EVENTS_PER_USER', 8, 1, 100) },
    fleetSync: {
      intervalMs: duration(env, 'EMS_FLEET_SYNC_INTERVAL', '5m') * 1000,
      catchUpDelayMs: duration(env, 'EMS_FLEET_CATCHUP_DELAY', '5m') * 1000,
    },
    reports: {
      mailRetryDelaysMs: delayList(env, 'EMS_REPORT_MAIL_RETRY', '1m,5m,15m'),
      keepFilesPerPlan: integer(env, 'EMS_REPORT_KEEP_FILES', 10, 1, 1000),
      minIntervalMin: Math.max(1, Math.round(duration(env, 'EMS_REPORT_MIN_INTERVAL', '15m') / 60)),
    },
    backupTarget: absoluteDir(env, 'EMS_BACKUP_TARGET'),
    logLevel,
  };
}

/** EMS_METRICS_TOKEN: at least 16 printable characters without spaces (it travels in an Authorization header). */
function metricsToken(env: Env): string | undefined {
  const value = env.EMS_METRICS_TOKEN;
  if (value === undefined || value === '') return undefined;
  if (!/^[\x21-\x7e]{16,256}$/.test(value)) throw new ConfigError('EMS_METRICS_TOKEN: must be 16 to 256 printable characters without spaces');
  return value;
}

/**
 * Every EMS_* name loadConfig reads: found by running it over an empty environment that records each name asked for
 * (loadConfig reads every setting on every start, whatever the others say), so a new setting is known the moment it is read.
 */
export function settingNames(): string[] {
  const asked = new Set<string>();
  const recorder = new Proxy({} as Env, {
    get(_target, name) {
      if (typeof name === 'string') asked.add(name);
      return undefined;
    },
  });
  loadConfig(recorder);
  return [...asked].filter((name) => name.startsWith('EMS_')).sort();
}

/** Edit distance (insert, delete, substitute one character: each 1). */
export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** The EMS_* variables in env that no setting reads (a typo such as PROT for PORT), each with the closest known name. */
export function unknownSettings(env: Env = process.env): { name: string; closest: string }[] {
  const known = settingNames();
  return Object.keys(env)
    .filter((name) => name.startsWith('EMS_') && !known.includes(name) && !TOOL_SETTINGS.includes(name))
    .sort()
    .map((name) => {
      let closest = known[0];
      for (const candidate of known) if (levenshtein(name, candidate) < levenshtein(name, closest)) closest = candidate;
      return { name, closest };
    });
}
