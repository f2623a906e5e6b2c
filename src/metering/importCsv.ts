// Reading a history file's text: one CSV line into fields, an instant with a zone, a number as portals write it, and
// the header names each column is known by. No meters, no days: that is the planner's (importPlan.ts).

/** A header that names no known columns is quoted back in at most this many names of at most NAME_SHOWN characters. */
const NAMES_SHOWN = 20;
const NAME_SHOWN = 40;

/** A header's names for a message: the first NAMES_SHOWN, each cut to NAME_SHOWN characters, and how many more. */
export function shownNames(names: string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).map((name) => (name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN - 1)}…` : name));
  return names.length > NAMES_SHOWN ? `${shown.join(', ')} and ${names.length - NAMES_SHOWN} more` : shown.join(', ');
}

/** Header names accepted for each column (lower case, spaces and dashes read as underscores). */
export const COLUMNS = {
  meter: ['meter', 'meter_id', 'meterid', 'meter_code', 'code'],
  time: ['start', 'time', 'timestamp', 'at', 'from'],
  kwh: ['kwh', 'energy_kwh', 'consumption_kwh'],
  reading: ['reading', 'reading_kwh', 'counter', 'counter_kwh', 'register_kwh'],
};

/**
 * An ISO 8601 instant with a zone (Z or ±hh:mm), to the minute or second: 2025-03-01T00:15:00Z, 2025-03-01 00:15+01:00.
 * Parsed by hand (3.5 M rows: Date.parse and a regular expression per row cost seconds); NaN when it is not one.
 */
export function parseInstant(text: string): number {
  const s = text.trim();
  const n = (from: number, length: number) => {
    let value = 0;
    for (let i = from; i < from + length; i += 1) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return NaN;
      value = value * 10 + c;
    }
    return value;
  };
  if (s.length < 17 || s[4] !== '-' || s[7] !== '-' || (s[10] !== 'T' && s[10] !== ' ') || s[13] !== ':') return NaN;
  const year = n(0, 4);
  const month = n(5, 2);
  const day = n(8, 2);
  const hour = n(11, 2);
  const minute = n(14, 2);
  let i = 16;
  let second = 0;
  if (s[i] === ':') {
    second = n(17, 2);
    i = 19;
    if (s[i] === '.') {
      i += 1;
      while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
        if (s[i] !== '0') return NaN; // a fraction of a second is never on an interval boundary
        i += 1;
      }
    }
  }
  let offset: number;
  const zone = s.slice(i);
  if (zone === 'Z' || zone === 'z') offset = 0;
  else if ((zone[0] === '+' || zone[0] === '-') && zone.length === 6 && zone[3] === ':')
    offset = (zone[0] === '-' ? -1 : 1) * (n(i + 1, 2) * 60 + n(i + 4, 2)) * 60_000;
  else if ((zone[0] === '+' || zone[0] === '-') && zone.length === 5) offset = (zone[0] === '-' ? -1 : 1) * (n(i + 1, 2) * 60 + n(i + 3, 2)) * 60_000;
  else return NaN;
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return NaN;
  const at = Date.UTC(year, month - 1, day, hour, minute, second) - offset;
  // 31 February and the like roll over in Date.UTC: refused, not moved to March.
  return new Date(at + offset).getUTCDate() === day ? at : NaN;
}

/** A number as portals write it: a decimal point, or a decimal comma when fields are separated by semicolons. */
export function parseNumber(text: string, decimalComma: boolean): number {
  const s = (decimalComma ? text.replace(',', '.') : text).trim();
  if (s === '' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return NaN;
  return Number(s);
}

/** Splits one CSV line (quotes allowed around a field, "" inside quotes). */
export function fields(line: string, separator: string): string[] {
  if (!line.includes('"')) return line.split(separator);
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
}
