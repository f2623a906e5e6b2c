// The migrations are hand-written SQL (several branches add them at once); the drizzle schema in src/platform/db/schema is what
// the code queries through. They must describe the same database: every table, column (type, NOT NULL, key) and index
// the shipped migrations create is the one the schema declares, and the newest drizzle-kit snapshot is the schema as
// it stands, so `npm run db:generate` writes only the next change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api';
import * as schema from '../../src/platform/db/schema/index.ts';
import { migrationsFolder } from '../../src/platform/db/client.ts';

type Shape = Map<string, unknown>;

/** Tables with their columns and indexes with their columns and uniqueness, as SQLite itself reports them. */
function shapeOf(sqlite: Database.Database): Shape {
  const shape: Shape = new Map();
  const objects = sqlite
    .prepare("SELECT type, name, tbl_name AS tableName FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' ORDER BY name")
    .all() as {
    type: string;
    name: string;
    tableName: string;
  }[];
  for (const { type, name, tableName } of objects) {
    if (type === 'table') {
      const columns = sqlite.pragma(`table_info('${name}')`) as { name: string; type: string; notnull: number; pk: number }[];
      // Sorted: a column added by ALTER TABLE stands last in the table, the schema may declare it anywhere.
      shape.set(`table ${name}`, columns.map((c) => `${c.name} ${c.type.toUpperCase()}${c.notnull ? ' NOT NULL' : ''}${c.pk ? ` PK${c.pk}` : ''}`).sort());
    } else if (type === 'index') {
      const columns = (sqlite.pragma(`index_info('${name}')`) as { name: string }[]).map((c) => c.name);
      const unique = (sqlite.pragma(`index_list('${tableName}')`) as { name: string; unique: number }[]).find((entry) => entry.name === name)?.unique;
      shape.set(`index ${name} on ${tableName}`, `${unique ? 'UNIQUE ' : ''}(${columns.join(', ')})`);
    } else {
      shape.set(`${type} ${name}`, tableName);
    }
  }
  return shape;
}

test('the shipped migrations build the database the drizzle schema declares', async () => {
  const migrated = new Database(':memory:');
  migrate(drizzle(migrated), { migrationsFolder: migrationsFolder() });

  const declared = new Database(':memory:');
  const statements = await generateSQLiteMigration(await generateSQLiteDrizzleJson({}), await generateSQLiteDrizzleJson(schema));
  for (const statement of statements) declared.exec(statement);

  const fromMigrations = shapeOf(migrated);
  const fromSchema = shapeOf(declared);
  // Triggers and seed rows come only from migrations; tables and indexes must agree.
  const comparable = (shape: Shape) => new Map([...shape].filter(([key]) => key.startsWith('table ') || key.startsWith('index ')));
  assert.ok(fromMigrations.size > 30, `${fromMigrations.size} objects`);
  assert.deepEqual(comparable(fromMigrations), comparable(fromSchema));
  migrated.close();
  declared.close();
});

test('the newest drizzle-kit snapshot is the schema as it stands (db:generate writes only the next change)', async () => {
  const meta = path.join(migrationsFolder(), 'meta');
  const newest = fs
    .readdirSync(meta)
    .filter((name) => name.endsWith('_snapshot.json'))
    .sort()
    .at(-1)!;
  const snapshot = JSON.parse(fs.readFileSync(path.join(meta, newest), 'utf8'));
  const pending = await generateSQLiteMigration(snapshot, await generateSQLiteDrizzleJson(schema));
  assert.deepEqual(pending, [], `${newest} is behind the schema`);
});
