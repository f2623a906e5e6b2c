// User avatars: PNG/JPEG/WebP proven by magic bytes, ≤ 2 MiB, under <data dir>/avatars/ with generated names; the users row points at them.
import fs from 'node:fs';
import path from 'node:path';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { NotFound, UnsupportedMediaType } from '../../platform/errors.ts';
import type { AuthUser } from '../../platform/http/route.ts';
import { generateStoredName, STORED_NAME_PATTERN } from './fileNames.ts';
import { IMAGE_EXTENSIONS, sniffImage, SNIFF_BYTES, type ImageType } from './mediaTypes.ts';
import { keepUpload, type ReceivedUpload } from './receiveUpload.ts';
import type { StoredBytes } from './sendFile.ts';

export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;

type Actor = Pick<AuthUser, 'id' | 'username'>;

export function avatarUrl(userId: number): string {
  return `/api/users/${userId}/avatar`;
}

async function readHead(file: string, bytes: number): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** One user's avatar in the users row: a column is null when the user has none. */
export type AvatarRow = { id: number; username: string; storedName: string | null; mimeType: string | null; avatarUrl: string | null };

/**
 * The port to the users row's avatar columns (access's avatarColumns, handed in by the composition root): access owns
 * the users table, and files is built before it.
 */
export type AvatarColumns = {
  read(userId: number): AvatarRow | undefined;
  write(userId: number, avatar: { storedName: string | null; mimeType: string | null; avatarUrl: string | null }): void;
};

export class AvatarStore {
  readonly directory: string;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    dataDir: string,
    private readonly columns: AvatarColumns,
  ) {
    this.directory = path.join(dataDir, 'avatars');
  }

  /** The user's avatar columns; 404 when the user does not exist. */
  user(userId: number) {
    const row = this.columns.read(userId);
    if (!row) throw new NotFound('User not found');
    return row;
  }

  /** Sniffs the received bytes, keeps them under a new name, points the row at them, then drops the previous file. */
  async replace(userId: number, upload: ReceivedUpload, actor: Actor): Promise<{ avatarUrl: string }> {
    const type = sniffImage(await readHead(upload.tempPath, SNIFF_BYTES));
    if (!type) throw new UnsupportedMediaType('An avatar must be a PNG, JPEG or WebP image (checked from its bytes, not its name or Content-Type)');
    const storedName = generateStoredName(IMAGE_EXTENSIONS[type]);
    const url = avatarUrl(userId);
    const previous = await keepUpload(upload, path.join(this.directory, storedName), () =>
      this.db.sqlite.transaction(() => {
        const before = this.user(userId);
        this.columns.write(userId, { storedName, mimeType: type, avatarUrl: url });
        this.audit.record({
          actor,
          action: 'avatar.update',
          resource: 'users',
          resourceId: userId,
          before: { avatarStoredName: before.storedName },
          after: { avatarStoredName: storedName, mimeType: type, size: upload.size, sha256: upload.sha256 },
        });
        return before.storedName;
      })(),
    );
    await this.removeFile(previous);
    return { avatarUrl: url };
  }

  async remove(userId: number, actor: Actor): Promise<void> {
    const previous = this.db.sqlite.transaction(() => {
      const before = this.user(userId);
      if (!before.storedName && !before.avatarUrl) return null;
      this.columns.write(userId, { storedName: null, mimeType: null, avatarUrl: null });
      this.audit.record({ actor, action: 'avatar.delete', resource: 'users', resourceId: userId, before: { avatarStoredName: before.storedName } });
      return before.storedName;
    })();
    await this.removeFile(previous);
  }

  /** What GET /users/:id/avatar streams: the sniffed image type, inline; the stored name (never reused) is the ETag. */
  bytes(userId: number): StoredBytes {
    const row = this.user(userId);
    if (!row.storedName || !STORED_NAME_PATTERN.test(row.storedName) || !row.mimeType || !(row.mimeType in IMAGE_EXTENSIONS)) {
      throw new NotFound('This user has no avatar');
    }
    const extension = IMAGE_EXTENSIONS[row.mimeType as ImageType];
    return {
      path: path.join(this.directory, row.storedName),
      etag: row.storedName,
      contentType: row.mimeType,
      downloadName: `avatar-${row.username}${extension}`,
      disposition: 'inline',
    };
  }

  private async removeFile(storedName: string | null): Promise<void> {
    if (storedName && STORED_NAME_PATTERN.test(storedName)) await fs.promises.rm(path.join(this.directory, storedName), { force: true });
  }
}
