// Rows and bytes of stored uploads (files and model_files share one shape): list, read, keep a received upload, delete.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import { NotFound } from '../http/errors.ts';
import { contains, PagedList } from '../http/listQuery.ts';
import type { AuthUser } from '../http/route.ts';
import { generateStoredName, STORED_NAME_PATTERN } from './fileNames.ts';
import { keepUpload, type ReceivedUpload } from './receiveUpload.ts';

export type StoredFileRow = {
  id: number;
  originalName: string;
  storedName: string;
  mimeType: string;
  size: number;
  sha256: string;
  uploadedBy: number | null;
  createdAt: string;
};

export type PageQuery = { page: number; pageSize: number; q?: string };
export type Page<T> = { items: T[]; total: number; page: number; pageSize: number };
type Actor = Pick<AuthUser, 'id' | 'username'>;

export type StoredFilesPolicy = {
  table: 'files' | 'model_files';
  /** audit_log resource name */
  resource: string;
  /** "File", "Model": used in 404 messages */
  noun: string;
  directory: string;
  /** The extension of the generated stored name and the media type recorded for a received upload. */
  classify(upload: ReceivedUpload): { extension: string; mimeType: string };
  /** Runs inside the delete transaction (e.g. clear references to the row). */
  onDelete?(id: number): void;
};

const COLUMNS = `id, original_name AS originalName, stored_name AS storedName, mime_type AS mimeType, size, sha256,
  uploaded_by AS uploadedBy, created_at AS createdAt`;

export class StoredFiles {
  private readonly pages: PagedList<StoredFileRow>;
  private readonly byId: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly remove: Database.Statement;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    readonly policy: StoredFilesPolicy,
  ) {
    const table = policy.table;
    // Newest first walks <table>_created_idx backwards; id breaks ties within one millisecond.
    this.pages = new PagedList(db.sqlite, table, COLUMNS, 'created_at DESC, id DESC');
    this.byId = db.sqlite.prepare(`SELECT ${COLUMNS} FROM ${table} WHERE id = ?`);
    this.insert = db.sqlite.prepare(
      `INSERT INTO ${table} (original_name, stored_name, mime_type, size, sha256, uploaded_by, created_at)
       VALUES (@originalName, @storedName, @mimeType, @size, @sha256, @uploadedBy, @createdAt)`,
    );
    this.remove = db.sqlite.prepare(`DELETE FROM ${table} WHERE id = ?`);
  }

  page({ page, pageSize, q }: PageQuery): Page<StoredFileRow> {
    return this.pages.page(contains(['original_name'], q), page, pageSize);
  }

  get(id: number): StoredFileRow {
    const row = this.byId.get(id) as StoredFileRow | undefined;
    if (!row) throw new NotFound(`${this.policy.noun} not found`);
    return row;
  }

  /** Where a row's bytes live; the stored name is re-checked so a tampered row can never point outside the directory. */
  pathOf(row: StoredFileRow): string {
    if (!STORED_NAME_PATTERN.test(row.storedName)) throw new NotFound(`${this.policy.noun} not found`);
    return path.join(this.policy.directory, row.storedName);
  }

  /** Moves the received temp file into the directory under a generated name and writes its row (plus audit) in one transaction. */
  async keep(upload: ReceivedUpload, actor: Actor): Promise<StoredFileRow> {
    const { extension, mimeType } = this.policy.classify(upload);
    const storedName = generateStoredName(extension);
    return keepUpload(upload, path.join(this.policy.directory, storedName), () =>
      this.db.sqlite.transaction(() => {
        const result = this.insert.run({
          originalName: upload.originalName,
          storedName,
          mimeType,
          size: upload.size,
          sha256: upload.sha256,
          uploadedBy: actor.id,
          createdAt: new Date().toISOString(),
        });
        const row = this.get(Number(result.lastInsertRowid));
        this.audit.record({ actor, action: 'upload', resource: this.policy.resource, resourceId: row.id, after: auditView(row) });
        return row;
      })(),
    );
  }

  /** Row first (in a transaction with its audit entry), then the bytes: a crash in between leaves an orphan file, never a dangling row. */
  async delete(id: number, actor: Actor): Promise<void> {
    const row = this.db.sqlite.transaction(() => {
      const before = this.get(id);
      this.remove.run(id);
      this.policy.onDelete?.(id);
      this.audit.record({ actor, action: 'delete', resource: this.policy.resource, resourceId: id, before: auditView(before) });
      return before;
    })();
    if (STORED_NAME_PATTERN.test(row.storedName)) await fs.promises.rm(path.join(this.policy.directory, row.storedName), { force: true });
  }
}

function auditView(row: StoredFileRow) {
  return { originalName: row.originalName, storedName: row.storedName, mimeType: row.mimeType, size: row.size, sha256: row.sha256 };
}
