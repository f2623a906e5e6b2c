// Rows and bytes of stored uploads (files and model_files share one shape): list, read, keep a received upload, delete.
import fs from 'node:fs';
import path from 'node:path';
import { desc, eq, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { contains, PagedQuery, slot } from '../../platform/db/listQuery.ts';
import { files, modelFiles } from '../../platform/db/schema/index.ts';
import { NotFound } from '../../platform/errors.ts';
import { generateStoredName, STORED_NAME_PATTERN } from './fileNames.ts';
import { keepUpload, type ReceivedUpload } from './receiveUpload.ts';

/** files and model_files are declared with the same columns, so one row type serves both. */
export type StoredFileRow = typeof files.$inferSelect;

export type PageQuery = { page: number; pageSize: number; q?: string };
export type Page<T> = { items: T[]; total: number; page: number; pageSize: number };

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

const TABLES = { files, model_files: modelFiles };

export class StoredFiles {
  private readonly pages;
  private readonly byId;
  private readonly insert;
  private readonly remove;
  private readonly originalName;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    readonly policy: StoredFilesPolicy,
  ) {
    // Both tables have the files columns; typing through one of them keeps every statement's row typed.
    const table = TABLES[policy.table] as typeof files;
    const id = eq(table.id, sql.placeholder('id'));
    this.originalName = table.originalName;
    // Newest first walks <table>_created_idx backwards; id breaks ties within one millisecond.
    this.pages = new PagedQuery(db, table, [desc(table.createdAt), desc(table.id)]);
    this.byId = db.orm.select().from(table).where(id).prepare();
    this.insert = db.orm
      .insert(table)
      .values({
        originalName: slot('originalName'),
        storedName: slot('storedName'),
        mimeType: slot('mimeType'),
        size: slot('size'),
        sha256: slot('sha256'),
        uploadedBy: slot('uploadedBy'),
        createdAt: slot('createdAt'),
      })
      .returning()
      .prepare();
    this.remove = db.orm.delete(table).where(id).returning().prepare();
  }

  page({ page, pageSize, q }: PageQuery): Page<StoredFileRow> {
    return this.pages.page(contains([this.originalName], q), page, pageSize);
  }

  get(id: number): StoredFileRow {
    const row = this.byId.get({ id });
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
        const row = this.insert.get({
          originalName: upload.originalName,
          storedName,
          mimeType,
          size: upload.size,
          sha256: upload.sha256,
          uploadedBy: actor.id,
          createdAt: new Date().toISOString(),
        })!;
        this.audit.record({ actor, action: 'upload', resource: this.policy.resource, resourceId: row.id, after: auditView(row) });
        return row;
      })(),
    );
  }

  /** Row first (in a transaction with its audit entry), then the bytes: a crash in between leaves an orphan file, never a dangling row. */
  async delete(id: number, actor: Actor): Promise<void> {
    const row = this.db.sqlite.transaction(() => {
      const before = this.remove.get({ id });
      if (!before) throw new NotFound(`${this.policy.noun} not found`);
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
