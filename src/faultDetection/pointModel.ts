// The point model: which equipment each gateway code belongs to and its Brick class and unit, the equipment's rated
// figures, and the model's exchange formats (CSV and Brick Turtle, both ways). A unit that contradicts its class is
// refused here, naming the field.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { slot } from '../platform/db/listQuery.ts';
import { fddEquipment, fddPoints, EQUIPMENT_TYPES } from '../platform/db/schema/index.ts';
import { BadRequest, NotFound } from '../platform/errors.ts';
import { suggest, unitContradiction, type EquipmentType } from './brick.ts';
import type { EquipmentModel } from './engine.ts';
import { pointsFromTurtle } from './turtle.ts';
import { DEFAULT_PARAMS } from './library.ts';
import type { PointMappingInput } from './schemas.ts';

export type PointRow = typeof fddPoints.$inferSelect;
const CSV_HEADER = 'code,equipment,equipmentType,brickClass,unit';
const EQUIPMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;

/** Brick's equipment class for each type EMS knows. */
const BRICK_EQUIPMENT: Record<EquipmentType, string> = {
  AHU: 'AHU',
  VAV: 'VAV',
  Chiller: 'Chiller',
  HotWaterLoop: 'Hot_Water_Loop',
  Zone: 'HVAC_Zone',
  Meter: 'Electrical_Meter',
};
/** QUDT unit names for the units a class accepts. */
const QUDT: Record<string, string> = {
  '°C': 'DEG_C',
  degC: 'DEG_C',
  K: 'K',
  '%': 'PERCENT',
  kW: 'KiloW',
  W: 'W',
  kWh: 'KiloW-HR',
  Wh: 'W-HR',
  MWh: 'MegaW-HR',
  Pa: 'PA',
  kPa: 'KiloPA',
  'm³/s': 'M3-PER-SEC',
  'm3/s': 'M3-PER-SEC',
  'l/s': 'L-PER-SEC',
};

export class PointModel {
  private readonly all;
  private readonly byCode;
  private readonly upsert;
  private readonly remove;
  private readonly equipmentRows;
  private readonly upsertEquipment;
  /** Bumped on every write: the evaluator rebuilds its runners when it changes. */
  revision = 0;

  constructor(private readonly db: Db) {
    this.all = db.orm.select().from(fddPoints).orderBy(fddPoints.equipment, fddPoints.code).prepare();
    this.byCode = db.orm
      .select()
      .from(fddPoints)
      .where(eq(fddPoints.code, sql.placeholder('code')))
      .prepare();
    const values = {
      equipment: slot('equipment'),
      equipmentType: slot('equipmentType'),
      brickClass: slot('brickClass'),
      unit: slot('unit'),
      updatedAt: slot('updatedAt'),
    };
    this.upsert = db.orm
      .insert(fddPoints)
      .values({ code: slot('code'), ...values })
      .onConflictDoUpdate({ target: fddPoints.code, set: values })
      .prepare();
    this.remove = db.orm
      .delete(fddPoints)
      .where(eq(fddPoints.code, sql.placeholder('code')))
      .prepare();
    this.equipmentRows = db.orm.select().from(fddEquipment).prepare();
    const equipmentValues = { type: slot('type'), params: slot('params'), updatedAt: slot('updatedAt') };
    this.upsertEquipment = db.orm
      .insert(fddEquipment)
      .values({ name: slot('name'), ...equipmentValues })
      .onConflictDoUpdate({ target: fddEquipment.name, set: equipmentValues })
      .prepare();
  }

  list(): PointRow[] {
    return this.all.all();
  }

  /** A person's confirmation of a code's meaning; refused (400, naming the field) when the unit contradicts the class. */
  confirm(code: string, input: PointMappingInput, prefix = 'body'): PointRow {
    const contradiction = unitContradiction(input.brickClass, input.unit);
    if (contradiction) {
      const field = contradiction.startsWith('unknown') ? 'brickClass' : 'unit';
      throw new BadRequest(`${code}: ${contradiction}`, [{ path: `${prefix}.${field}`, message: contradiction }]);
    }
    this.upsert.run({ code, ...input, updatedAt: new Date().toISOString() });
    this.revision++;
    return this.byCode.get({ code })!;
  }

  forget(code: string): void {
    if (this.remove.run({ code }).changes === 0) throw new NotFound(`no mapping for ${code}`);
    this.revision++;
  }

  /** The gateway's catalogue with a suggestion for each code; a mapped code shows its mapping. */
  suggestions(catalogue: Array<{ code: string; name: string | null; unit: string | null }>) {
    const mapped = new Map(this.list().map((row) => [row.code, row]));
    return catalogue.map((point) => {
      const row = mapped.get(point.code);
      if (row)
        return {
          code: row.code,
          name: point.name,
          equipment: row.equipment,
          equipmentType: row.equipmentType,
          brickClass: row.brickClass,
          unit: row.unit,
          mapped: true,
        };
      return { ...suggest(point), name: point.name, mapped: false };
    });
  }

  /**
   * CSV in (the export's own columns): every line checked as a confirmation would be; one bad line refuses the whole
   * file (400, each bad line named with its number and field) and nothing is written. A good file is written in one
   * transaction.
   */
  importCsv(text: string): { imported: number; refused: Array<{ line: number; error: string }> } {
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
    if (lines[0]?.trim() !== CSV_HEADER)
      throw new BadRequest(`the first line must be the header ${CSV_HEADER}`, [{ path: 'line 1', message: `must be ${CSV_HEADER}` }]);
    const rows: Array<{ line: number; cells: string[] }> = [];
    for (const [i, raw] of lines.slice(1).entries()) if (raw.trim()) rows.push({ line: i + 2, cells: parseCsvLine(raw) });
    return this.importRows(rows, [], 'CSV');
  }

  /**
   * Brick Turtle in (the export's own form, or any graph in the same terms: turtle.ts): each point checked as a CSV
   * line is; one bad point or unreadable line refuses the whole file, naming the line, and nothing is written.
   */
  importTurtle(text: string): { imported: number; refused: Array<{ line: number; error: string }> } {
    const equipmentTypes = Object.fromEntries(Object.entries(BRICK_EQUIPMENT).map(([type, brick]) => [brick, type]));
    const units: Record<string, string> = {};
    for (const [unit, qudt] of Object.entries(QUDT)) units[qudt] ??= unit;
    const { rows, refused } = pointsFromTurtle(text, equipmentTypes, units);
    return this.importRows(rows, refused, 'Turtle');
  }

  private importRows(
    rows: Array<{ line: number; cells: string[] }>,
    refusedAlready: Array<{ line: number; error: string }>,
    format: string,
  ): { imported: number; refused: Array<{ line: number; error: string }> } {
    const refused = [...refusedAlready];
    const good: Array<[string, PointMappingInput]> = [];
    const lineOf = new Map<string, number>();
    for (const { line, cells } of rows) {
      const parsed = csvMapping(cells);
      if (typeof parsed === 'string') refused.push({ line, error: parsed });
      else if (lineOf.has(parsed[0])) refused.push({ line, error: `code: ${parsed[0]} is also on line ${lineOf.get(parsed[0])}` });
      else {
        lineOf.set(parsed[0], line);
        good.push(parsed);
      }
    }
    if (refused.length) {
      refused.sort((a, b) => a.line - b.line);
      throw new BadRequest(
        `the ${format} file was not imported: ${refused.length} bad line${refused.length === 1 ? '' : 's'}, first line ${refused[0]!.line}: ${refused[0]!.error}`,
        refused.slice(0, 100).map((r) => ({ path: `line ${r.line}`, message: r.error })),
      );
    }
    if (!good.length) throw new BadRequest(`the ${format} file holds no points`, [{ path: 'body', message: 'no points' }]);
    const at = new Date().toISOString();
    this.db.sqlite.transaction(() => {
      for (const [code, input] of good) this.upsert.run({ code, ...input, updatedAt: at });
    })();
    this.revision++;
    return { imported: good.length, refused: [] };
  }

  exportCsv(): string {
    const rows = this.list().map((row) => [row.code, row.equipment, row.equipmentType, row.brickClass, row.unit].map(csvCell).join(','));
    return `${[CSV_HEADER, ...rows].join('\r\n')}\r\n`;
  }

  /** The model as Brick Turtle: each equipment with its Brick class, each point with its class, equipment and unit. */
  turtle(): string {
    const rows = this.list();
    const out = [
      '@prefix brick: <https://brickschema.org/schema/Brick#> .',
      '@prefix unit: <http://qudt.org/vocab/unit/> .',
      '@prefix ems: <urn:ems:model#> .',
      '',
    ];
    const seen = new Set<string>();
    for (const row of rows) {
      if (seen.has(row.equipment)) continue;
      seen.add(row.equipment);
      out.push(`ems:${localName('equipment', row.equipment)} a brick:${BRICK_EQUIPMENT[row.equipmentType]} ;`, `  ems:name ${literal(row.equipment)} .`);
    }
    for (const row of rows) {
      const unit = QUDT[row.unit];
      out.push(
        `ems:${localName('point', row.code)} a brick:${row.brickClass} ;`,
        `  brick:isPointOf ems:${localName('equipment', row.equipment)} ;`,
        ...(unit ? [`  brick:hasUnit unit:${unit} ;`] : []),
        // EMS's own spelling of the unit, so the file comes back exactly (QUDT has no "on/off").
        `  ems:unit ${literal(row.unit)} ;`,
        `  ems:gatewayCode ${literal(row.code)} .`,
      );
    }
    return `${out.join('\n')}\n`;
  }

  setEquipment(name: string, type: EquipmentType, params: Record<string, number>): void {
    this.upsertEquipment.run({ name, type, params: JSON.stringify(params), updatedAt: new Date().toISOString() });
    this.revision++;
  }

  /** Every equipment some point names, with its points by class and its rated figures (the type's defaults, then its own). */
  equipment(): EquipmentModel[] {
    const own = new Map(this.equipmentRows.all().map((row) => [row.name, row]));
    const models = new Map<string, EquipmentModel & { points: Map<string, string> }>();
    for (const row of this.list()) {
      let model = models.get(row.equipment);
      if (!model) {
        const type = own.get(row.equipment)?.type ?? row.equipmentType;
        model = { name: row.equipment, type, params: { ...DEFAULT_PARAMS[type], ...own.get(row.equipment)?.params }, points: new Map() };
        models.set(row.equipment, model);
      }
      model.points.set(row.brickClass, row.code);
    }
    return [...models.values()];
  }
}

/** One CSV line's mapping, or what is wrong with it (the field first). */
function csvMapping(cells: string[]): [string, PointMappingInput] | string {
  if (cells.length !== 5) return `expected 5 fields, got ${cells.length}`;
  const [code, equipment, equipmentType, brickClass, unit] = cells as [string, string, string, string, string];
  if (!code || code.length > 200) return 'code: must be 1 to 200 characters';
  if (!EQUIPMENT_NAME.test(equipment)) return 'equipment: letters, digits, space, dot, dash or underscore, at most 100';
  if (!(EQUIPMENT_TYPES as readonly string[]).includes(equipmentType)) return `equipmentType: must be one of ${EQUIPMENT_TYPES.join(', ')}`;
  const contradiction = unitContradiction(brickClass, unit);
  if (contradiction) return `${contradiction.startsWith('unknown') ? 'brickClass' : 'unit'}: ${contradiction}`;
  return [code, { equipment, equipmentType: equipmentType as EquipmentType, brickClass, unit }];
}

function localName(kind: string, name: string): string {
  return `${kind}_${name.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}_`)}`;
}

function literal(text: string): string {
  return JSON.stringify(text);
}

function csvCell(value: string): string {
  return /[",\r\n]|^[=+\-@]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function parseCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}
