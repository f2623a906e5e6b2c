// The one streaming upload receiver (files, models, avatars): multipart → temp file with SHA-256 and size, limits, cleanup.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { errors as formidableErrors, formidable, multipart, type Part } from 'formidable';
import { AppError, BadRequest, HttpError, PayloadTooLarge } from '../errors.ts';
import { cleanOriginalName } from './fileNames.ts';
import { cleanClaimedType } from './mediaTypes.ts';

export type ReceiveOptions = {
  /** <data dir>/tmp: same file system as the final directories, so keeping a file is one rename. */
  tmpDir: string;
  maxBytes: number;
  /** The multipart field that carries the file. */
  field?: string;
  /** Checks the file part's name and claimed type as soon as its headers arrive; throw an HttpError to refuse before any byte is stored. */
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
 * Bytes that may wait for the disk. formidable pauses the socket until each chunk's write callback; answering
 * that callback once the chunk is queued (not once it is on disk) lets receiving and writing overlap, at a
 * memory cost bounded by this.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

const TEMP_PREFIX = 'upload-';
const TEMP_SUFFIX = '.part';

export class UploadAborted extends HttpError {
  constructor() {
    super(400, 'The upload was aborted by the client');
  }
}

function tooLarge(maxBytes: number, headers?: Record<string, string>): AppError {
  const message = `The file is larger than the limit of ${maxBytes} bytes`;
  return headers ? new HttpError(413, message, undefined, headers) : new PayloadTooLarge(message);
}

/** formidable's numbered errors → our catalogue; file-system errors (ENOSPC, …) pass through to the error renderer. */
function translate(error: unknown, maxBytes: number, field: string): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'number') return error;
  switch (code) {
    case formidableErrors.biggerThanTotalMaxFileSize:
    case formidableErrors.biggerThanMaxFileSize:
      return tooLarge(maxBytes);
    case formidableErrors.maxFieldsSizeExceeded:
      return new PayloadTooLarge(`Form fields other than "${field}" may hold at most ${MAX_FIELDS_BYTES} bytes`);
    case formidableErrors.maxFieldsExceeded:
    case formidableErrors.maxFilesExceeded:
      return new BadRequest(`Too many form parts: send one file in field "${field}"`);
    case formidableErrors.noEmptyFiles:
    case formidableErrors.smallerThanMinFileSize:
      return new BadRequest('The file is empty');
    case formidableErrors.aborted:
      return new UploadAborted();
    default:
      return new BadRequest(`Malformed multipart body: send one file in field "${field}"`);
  }
}

function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\s*;.*\bboundary=/i.test(req.headers['content-type'] ?? '');
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

/** What formidable writes to: accepts a chunk while the file stream has room, forwards errors, finishes when the fd is closed. */
function bufferedWriter(file: fs.WriteStream): Writable {
  const writer = new Writable({
    write(chunk: Buffer, _encoding, done) {
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
  return writer;
}

function closed(stream: fs.WriteStream): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once('close', () => resolve()));
}

/**
 * Streams the one file of a multipart request to a temp file while formidable hashes and counts it; the
 * request is paused while each chunk is written, so memory stays flat whatever the size. Resolves with the
 * temp file (the caller keeps or discards it); on any failure (over the limit, malformed, aborted, disk
 * full) the temp file is already gone when the error is thrown.
 */
export async function receiveUpload(req: IncomingMessage, options: ReceiveOptions): Promise<ReceivedUpload> {
  const { tmpDir, maxBytes } = options;
  const field = options.field ?? 'file';
  if (!isMultipart(req)) throw new BadRequest(`Expected a multipart/form-data body with the file in field "${field}"`);
  const declared = Number(req.headers['content-length']);
  // A body declared far over the limit is refused before a byte is read; closing stops the client sending it.
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_SLACK) throw tooLarge(maxBytes, { Connection: 'close' });

  const tempPath = path.join(tmpDir, `${TEMP_PREFIX}${randomBytes(12).toString('hex')}${TEMP_SUFFIX}`);
  let output: fs.WriteStream | undefined;
  let finished = false;
  let parts = 0;
  let fileParts = 0;
  let received: { size: number; hash?: unknown; originalFilename: string | null; mimetype: string | null } | undefined;

  const form = formidable({
    enabledPlugins: [multipart],
    maxFiles: 1,
    maxFileSize: maxBytes,
    maxTotalFileSize: maxBytes,
    maxFields: MAX_FIELDS,
    maxFieldsSize: MAX_FIELDS_BYTES,
    allowEmptyFiles: false,
    minFileSize: 1,
    hashAlgorithm: 'sha256',
    fileWriteStreamHandler: () => {
      // Only the first file part gets a file, and none once the request is settled: formidable can open a file
      // after an await that raced an error, and that file must not outlive our cleanup.
      if (output || finished) return new Writable({ write: (_chunk, _encoding, done) => done() });
      // flush: fsync before close, so a row is only ever written for bytes that are on disk (see keepUpload).
      output = fs.createWriteStream(tempPath, { flags: 'wx', mode: 0o640, highWaterMark: WRITE_BUFFER_BYTES, flush: true });
      return bufferedWriter(output);
    },
  });
  // formidable's _error is the one way to fail the whole parse from a part handler; it is not in its typings.
  const internals = form as unknown as { error: unknown; _error(error: unknown): void; _handlePart(part: Part): Promise<void> };
  const fail = (error: unknown) => internals._error(error);

  // Our own part policy runs before formidable's: count parts, one file in the named field, a file part without
  // a Content-Type is still a file (formidable would buffer it as a text field).
  form.onPart = (part: Part) => {
    if (internals.error) return;
    parts += 1;
    if (parts > MAX_PARTS) return fail(new BadRequest(`Too many form parts: send one file in field "${field}"`));
    const isFile = part.originalFilename !== null || part.mimetype !== null;
    if (isFile) {
      if (part.name !== field) return fail(new BadRequest(`Unexpected file in field "${part.name ?? ''}": send it in field "${field}"`));
      fileParts += 1;
      if (fileParts > 1) return fail(new BadRequest('One file per request'));
      part.mimetype ??= 'application/octet-stream';
      try {
        options.accept?.(cleanOriginalName(part.originalFilename), cleanClaimedType(part.mimetype));
      } catch (error) {
        return fail(error);
      }
    }
    // Returned so formidable awaits it; a rejection becomes a form error instead of an unhandled rejection.
    return internals._handlePart(part).catch(fail) as unknown as void;
  };
  form.on('file', (_name, file) => {
    received = file;
  });
  const abortWatch = () => {
    if (!req.complete) fail(new UploadAborted());
  };
  req.once('close', abortWatch);

  try {
    await form.parse(req);
    if (!received || !output) throw new BadRequest(`No file in field "${field}"`);
    await closed(output);
    const sha256 = typeof received.hash === 'string' ? received.hash : '';
    if (!/^[a-f0-9]{64}$/.test(sha256)) throw new Error('upload finished without a SHA-256');
    finished = true;
    return {
      tempPath,
      originalName: cleanOriginalName(received.originalFilename),
      claimedType: cleanClaimedType(received.mimetype),
      size: received.size,
      sha256,
    };
  } catch (error) {
    finished = true;
    const clientGone = req.destroyed && !req.complete;
    if (output) {
      output.destroy();
      await closed(output);
    }
    await removeQuietly(tempPath);
    if (!clientGone) drainRefused(req);
    throw clientGone ? new UploadAborted() : translate(error, maxBytes, field);
  } finally {
    req.off('close', abortWatch);
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
