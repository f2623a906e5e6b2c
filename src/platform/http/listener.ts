// The listening socket, HTTP or HTTPS: bound before anything is created on disk, answering 503 until the app is
// attached; the certificate and key are re-read on demand (SIGHUP) without dropping the process or its connections.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import type { Config } from '../config.ts';

/** A start-up that cannot go on (port taken, unusable certificate, data dir not writable): one line, exit 2. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Slow or stalled clients cannot hold the server: header, request and keep-alive limits. */
export function applyServerTimeouts(server: http.Server): void {
  server.headersTimeout = 20_000;
  // Large enough for a 100 MiB upload over a slow LAN link.
  server.requestTimeout = 15 * 60_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
}

export type TlsFiles = { certFile: string; keyFile: string };

/** A certificate and its key, read and checked together; `validTo` and `subject` are for the log. */
export type TlsCredentials = { cert: Buffer; key: Buffer; subject: string; validTo: string; fingerprint256: string };

function readPem(file: string, variable: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new StartupError(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** Reads both files and checks that they are a PEM certificate (chain) and the private key that belongs to it. */
export function readTlsCredentials(files: TlsFiles): TlsCredentials {
  const cert = readPem(files.certFile, 'EMS_TLS_CERT');
  const key = readPem(files.keyFile, 'EMS_TLS_KEY');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch {
    throw new StartupError(`EMS_TLS_CERT: ${files.certFile} holds no PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new StartupError(`EMS_TLS_KEY: ${files.keyFile} holds no usable PEM private key (a passphrase-protected key is not supported)`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new StartupError(`EMS_TLS_KEY: ${files.keyFile} is not the key of the certificate in ${files.certFile}`);
  }
  try {
    tls.createSecureContext({ cert, key });
  } catch (error) {
    throw new StartupError(`EMS_TLS_CERT: ${files.certFile} cannot be served (${(error as Error).message})`);
  }
  return { cert, key, subject: leaf.subject.replace(/\n/g, ', '), validTo: new Date(leaf.validTo).toISOString(), fingerprint256: leaf.fingerprint256 };
}

/** What a failed bind means to the person who set EMS_HOST / EMS_PORT. */
function bindProblem(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `EMS_PORT: port ${port} on ${host} is already in use (is another EMS or another program listening there?)`;
    case 'EACCES':
      return `EMS_PORT: no permission to listen on port ${port} (ports below 1024 need a privilege the service does not have)`;
    case 'EADDRNOTAVAIL':
      return `EMS_HOST: ${host} is not an address of this machine`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `EMS_HOST: cannot resolve "${host}"`;
    default:
      return `cannot listen on ${host}:${port} (${error.code ?? error.message})`;
  }
}

export type Listener = {
  server: http.Server;
  protocol: 'http' | 'https';
  url: string;
  port: number;
  /** The certificate being served (HTTPS only). */
  credentials: TlsCredentials | null;
  /** Hands requests to the app from now on (until then every request is answered 503). */
  attach(handler: http.RequestListener): void;
  /** Re-reads the certificate and key; a bad pair is refused and the one in use stays. HTTPS only. */
  reloadTls(): TlsCredentials;
};

/** Answered while the service is still starting (database, migrations, first admin): try again in a second. */
/**
 * Request line plus headers. Node's default (16 KiB) answered 431 to a valid GET /api/iot/codes/values with ~130
 * point codes of 128 characters; 96 KiB holds the schema's 500 ASCII codes. headersTimeout (20 s) still bounds a slow
 * sender, and one connection holds one request head at a time.
 */
export const MAX_HEADER_BYTES = 96 * 1024;

const startingUp: http.RequestListener = (_req, res) => {
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
  res.end(JSON.stringify({ error: 'The service is starting; try again in a moment', code: 'UNAVAILABLE' }));
};

/** A TLS connection opens with a handshake record (content type 22); a plain HTTP request opens with a method's letter. */
const TLS_HANDSHAKE = 0x16;
/** How long a new connection on the HTTPS port may stay silent before its first byte (then the TLS limits apply). */
const FIRST_BYTE_TIMEOUT_MS = 20_000;

/**
 * On the HTTPS port, a plain http:// request would otherwise end in a connection reset with no hint. Each new
 * connection's first byte is read before the TLS layer sees it: a handshake goes on to TLS unchanged (the byte is put
 * back); anything else is answered in plain HTTP, 400 with the https:// URL to use, and closed.
 */
function answerPlainHttpOnTls(server: https.Server): void {
  const tlsListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('error', () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.setTimeout(0);
      if (chunk[0] === TLS_HANDSHAKE) {
        socket.pause();
        socket.unshift(chunk);
        for (const listener of tlsListeners) listener.call(server, socket);
        return;
      }
      // Whatever else the client sends is read and dropped (a paused socket would never see the client's FIN, and the
      // connection would hold a graceful shutdown open); a client that does not close is cut off after 5 s.
      socket.on('data', () => {});
      socket.setTimeout(5_000, () => socket.destroy());
      const head = chunk.toString('latin1');
      const target = /^[A-Z]+ (\/[^\s]*) HTTP\/1/.exec(head)?.[1] ?? '/';
      const host = /\r\nhost:[ \t]*([^\s]+)/i.exec(head)?.[1] ?? `${socket.localAddress}:${socket.localPort}`;
      const url = `https://${host}${target}`;
      const body = JSON.stringify({ error: `This port speaks HTTPS: use ${url}`, code: 'VALIDATION' });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  });
}

/** Binds EMS_HOST:EMS_PORT (HTTPS when EMS_TLS_CERT/EMS_TLS_KEY are set); a taken port is a StartupError. */
export async function bindListener(config: Pick<Config, 'host' | 'port' | 'tls'>): Promise<Listener> {
  const files = config.tls;
  let credentials = files ? readTlsCredentials(files) : null;
  const server: http.Server = credentials
    ? https.createServer({ cert: credentials.cert, key: credentials.key, minVersion: 'TLSv1.2', maxHeaderSize: MAX_HEADER_BYTES }, startingUp)
    : http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, startingUp);
  applyServerTimeouts(server);
  if (credentials) answerPlainHttpOnTls(server as https.Server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(bindProblem(error, config.host, config.port));
  });
  const { port } = server.address() as AddressInfo;
  const protocol = credentials ? 'https' : 'http';
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let handler = startingUp;
  return {
    server,
    protocol,
    url: `${protocol}://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`,
    port,
    get credentials() {
      return credentials;
    },
    attach(next) {
      server.off('request', handler);
      server.on('request', next);
      handler = next;
    },
    reloadTls() {
      if (!files) throw new StartupError('EMS_TLS_CERT: not set, the service speaks plain HTTP');
      const fresh = readTlsCredentials(files);
      // New handshakes get the new pair; connections already open keep the one they were made with.
      (server as unknown as https.Server).setSecureContext({ cert: fresh.cert, key: fresh.key });
      credentials = fresh;
      return fresh;
    },
  };
}
