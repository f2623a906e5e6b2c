// The one streaming upload receiver (files, models, avatars): multipart → temp file with SHA-256 and size, limits, cleanup.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type busboy from 'busboy';
import { BadRequest, PayloadTooLarge } from '../../platform/errors.ts';
import { cleanOriginalName } from '../../platform/http/attachment.ts';
import { cleanClaimedType } from './mediaTypes.ts';

export type ReceiveOptions = {
  /** <data dir>/tmp: same file system as the final directories, so keeping a file is one rename. */
  tmpDir: string;
  maxBytes: number;
  /** The multipart field that carries the file. */
  field?: string;
  /** Checks the file part's name and claimed type as soon as its headers arrive; throw a catalogue error (UnsupportedMediaType …) to refuse before any byte is stored. */
  accept?(originalName: string, claimedType: string): void;
};

export type ReceivedUpload = {
  tempPath: string;
  /** The client's name, cleaned (see cleanOriginalName); data only, never a path. */
  originalName: string;
  /** The client's Content-Type for the part, cleaned; a claim, not a fact. */
  claimedType: string;
  size: number;
  sha256: string;
};

/** Room for boundaries and part headers around the file before a declared Content-Length is refused outright. */
const MULTIPART_SLACK = 64 * 1024;
/** One file plus a few small fields at most: every part costs parsing, so their number is capped. */
const MAX_PARTS = 8;
const MAX_FIELDS = 6;
const MAX_FIELDS_BYTES = 16 * 1024;
/** After a refusal the rest of the body is read and dropped (so the client sees the answer); past this the socket is cut. */
const DRAIN_LIMIT = 8 * 1024 * 1024;

/**
 * Bytes that may wait for the disk. The parser stops reading the request while the file stream is full; the file
 * stream counts a chunk as taken once it is queued (not once it is on disk), so receiving and writing overlap, at
 * a memory cost bounded by this.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

const TEMP_PREFIX = 'upload-';
const TEMP_SUFFIX = '.part';

export class UploadAborted extends BadRequest {
  constructor() {
    super('The upload was aborted by the client');
  }
}

function tooLarge(maxBytes: number, headers?: Record<string, string>): PayloadTooLarge {
  return new PayloadTooLarge(`The file is larger than the limit of ${maxBytes} bytes`, headers);
}

const malformed = (field: string) => new BadRequest(`Malformed multipart body: send one file in field "${field}"`);

function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*;.*\bboundary=/i.test(req.headers['content-type'] ?? '');
}

/**
 * A browser writes a file name's '"' as %22 and a character its form charset lacks as "&#NNNN;"; both are read
 * back here (what they decode to is cleaned afterwards like any other name).
 */
function decodeFormFileName(raw: string | undefined): string | undefined {
  return raw
    ?.replace(/%22/g, '"')
    .replace(/&#(\d{1,7});/g, (whole, digits: string) => (Number(digits) <= 0x10ffff ? String.fromCodePoint(Number(digits)) : whole));
}

/** Reads and drops what is left of a refused body, up to DRAIN_LIMIT, so the refusal reaches the client. */
function drainRefused(req: IncomingMessage): void {
  if (req.destroyed || req.complete) return;
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT) req.socket.destroy();
  });
  req.resume();
}

async function removeQuietly(file: string): Promise<void> {
  await fs.promises.rm(file, { force: true }).catch(() => undefined);
}

/** Resolves once the file's descriptor is closed (after the fsync that `flush` asks for); rejects on a write error. */
function closed(stream: fs.WriteStream): Promise<void> {
  if (stream.closed) return stream.errored ? Promise.reject(stream.errored) : Promise.resolve();
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.once('close', () => resolve());
  });
}

/** Where the file part is piped: hashes and counts each chunk, hands it to the file, finishes once the file is closed. */
function hashingWriter(file: fs.WriteStream): { writer: Writable; digest(): { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  const writer = new Writable({
    write(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      if (file.write(chunk)) done();
      else file.once('drain', () => done());
    },
    final(done) {
      file.end();
      closed(file).then(() => done(), done);
    },
    destroy(error, done) {
      file.destroy();
      done(error);
    },
  });
  file.on('error', (error) => writer.destroy(error));
  return { writer, digest: () => ({ size, sha256: hash.digest('hex') }) };
}

/** A part that will not be stored still has to be read for the parser to move on; its errors are the parser's. */
function discard(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.resume();
}

/** The multipart parser for a request, with the limits on the file's size and on the parts and fields around it (400 when its header is unreadable). */
function multipartParser(req: IncomingMessage, maxBytes: number, field: string): busboy.Busboy {
  try {
    // Loaded on the first upload, not at start-up: idle RSS (issue 29).
    return (createRequire(import.meta.url)('busboy') as typeof busboy)({
      headers: req.headers,
      // Names are cleaned in one place (cleanOriginalName), after the browser escapes are read back.
      preservePath: true,
      defParamCharset: 'utf8',
      limits: {
        // One byte past the limit is what tells "too large" from "exactly the limit".
        fileSize: maxBytes + 1,
        // The parser signals the count once reached, and the closing boundary counts: one more lets exactly MAX_PARTS through.
        parts: MAX_PARTS + 1,
        fields: MAX_FIELDS,
        fieldSize: MAX_FIELDS_BYTES + 1,
      },
    });
  } catch {
    throw malformed(field);
  }
}

/**
 * Streams the one file of a multipart request to a temp file, hashing and counting it on the way; the request
 * is not read while the file stream is full, so memory stays flat whatever the size. Resolves with the temp file
 * (the caller keeps or discards it); on any failure (over the limit, malformed, aborted, disk full) the temp
 * file is already gone when the error is thrown.
 */
export async function receiveUpload(req: IncomingMessage, options: ReceiveOptions): Promise<ReceivedUpload> {
  const { tmpDir, maxBytes } = options;
  const field = options.field ?? 'file';
  if (!isMultipart(req)) throw new BadRequest(`Expected a multipart/form-data body with the file in field "${field}"`);
  const declared = Number(req.headers['content-length']);
  // A body declared far over the limit is refused before a byte is read; closing stops the client sending it.
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_SLACK) throw tooLarge(maxBytes, { Connection: 'close' });

  const parser = multipartParser(req, maxBytes, field);

  const tempPath = path.join(tmpDir, `${TEMP_PREFIX}${randomBytes(12).toString('hex')}${TEMP_SUFFIX}`);
  let output: fs.WriteStream | undefined;
  let stored: Promise<Omit<ReceivedUpload, 'tempPath'>> | undefined;
  let fileParts = 0;
  let fieldBytes = 0;

  // The first failure decides the answer; each is put in the catalogue where it arises (a later echo of it
  // through another stream is ignored).
  let failed = false;
  let settle!: () => void;
  let refuse!: (error: unknown) => void;
  const parsed = new Promise<void>((resolve, reject) => {
    settle = resolve;
    refuse = reject;
  });
  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    refuse(error);
  };
  const abortWatch = () => {
    if (!req.complete) fail(new UploadAborted());
  };

  parser.on('file', (name, stream, info) => {
    if (failed) return discard(stream);
    fileParts += 1;
    if (name !== field) {
      discard(stream);
      // A Content-Disposition without a name gives none, whatever the typings say.
      return fail(new BadRequest(`Unexpected file in field "${name ?? ''}": send it in field "${field}"`));
    }
    if (fileParts > 1) {
      discard(stream);
      return fail(new BadRequest('One file per request'));
    }
    const originalName = cleanOriginalName(decodeFormFileName(info.filename));
    const claimedType = cleanClaimedType(info.mimeType);
    try {
      options.accept?.(originalName, claimedType);
    } catch (error) {
      discard(stream);
      return fail(error);
    }
    stream.on('limit', () => fail(tooLarge(maxBytes)));
    // The part's stream errors when the parser does (the body ends inside the file, a later part header is broken).
    stream.on('error', () => fail(malformed(field)));
    // flush: fsync before close, so a row is only ever written for bytes that are on disk (see keepUpload).
    output = fs.createWriteStream(tempPath, { flags: 'wx', mode: 0o640, highWaterMark: WRITE_BUFFER_BYTES, flush: true });
    // Before the pipeline hears of it: a disk error (ENOSPC, …) goes to the error renderer as it is.
    output.on('error', fail);
    const { writer, digest } = hashingWriter(output);
    stored = pipeline(stream, writer).then(() => ({ originalName, claimedType, ...digest() }));
    stored.catch(fail);
  });
  parser.on('field', (_name, value, info) => {
    fieldBytes += Buffer.byteLength(value);
    if (info.valueTruncated || fieldBytes > MAX_FIELDS_BYTES) {
      fail(new PayloadTooLarge(`Form fields other than "${field}" may hold at most ${MAX_FIELDS_BYTES} bytes`));
    }
  });
  parser.on('partsLimit', () => fail(new BadRequest(`Too many form parts: send one file in field "${field}"`)));
  parser.on('fieldsLimit', () => fail(new BadRequest(`Too many form parts: send one file in field "${field}"`)));
  parser.on('error', () => fail(malformed(field)));
  parser.on('close', () => settle());
  // A client that goes away mid-body: 'close' (or 'error', ECONNRESET) before the request completed.
  req.on('close', abortWatch);
  req.on('error', abortWatch);
  req.pipe(parser);

  try {
    await parsed;
    if (!stored) throw new BadRequest(`No file in field "${field}"`);
    const upload = await stored;
    if (upload.size === 0) throw new BadRequest('The file is empty');
    return { tempPath, ...upload };
  } catch (error) {
    failed = true;
    const clientGone = req.destroyed && !req.complete;
    req.unpipe(parser);
    parser.destroy();
    if (output) {
      output.destroy();
      await closed(output).catch(() => undefined);
    }
    await removeQuietly(tempPath);
    if (!clientGone) drainRefused(req);
    throw clientGone ? new UploadAborted() : error;
  } finally {
    req.off('close', abortWatch);
    req.off('error', abortWatch);
  }
}

/** fsync of a directory: makes a rename inside it durable. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Moves a received file into place under its final name, then writes its row; a failed row write removes the
 * file again, so there is never a file without a row or a row without a file. The bytes were fsynced on close
 * and the rename is fsynced here, before the row commits: a power loss can drop the newest row (SQLite runs
 * synchronous=NORMAL) and leave an orphan file, but never a row whose bytes are missing.
 */
export async function keepUpload<T>(upload: ReceivedUpload, destination: string, record: () => T): Promise<T> {
  try {
    await fs.promises.rename(upload.tempPath, destination);
    await syncDirectory(path.dirname(destination));
  } catch (error) {
    await removeQuietly(destination);
    await removeQuietly(upload.tempPath);
    throw error;
  }
  try {
    return record();
  } catch (error) {
    await removeQuietly(destination);
    throw error;
  }
}

/** receiveUpload, then `use`; whatever `use` does not keep is removed from tmp/ afterwards. */
export async function withUpload<T>(req: IncomingMessage, options: ReceiveOptions, use: (upload: ReceivedUpload) => Promise<T>): Promise<T> {
  const upload = await receiveUpload(req, options);
  try {
    return await use(upload);
  } finally {
    await removeQuietly(upload.tempPath);
  }
}

/** At start-up nothing is in flight: temp files left by a crash or power loss are removed. */
export function sweepStaleUploads(tmpDir: string): number {
  let removed = 0;
  for (const name of fs.existsSync(tmpDir) ? fs.readdirSync(tmpDir) : []) {
    if (!name.startsWith(TEMP_PREFIX) || !name.endsWith(TEMP_SUFFIX)) continue;
    fs.rmSync(path.join(tmpDir, name), { force: true });
    removed += 1;
  }
  return removed;
}
