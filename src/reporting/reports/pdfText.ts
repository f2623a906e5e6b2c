// Text on a report page in any script: Noto Sans (Latin, Greek, Cyrillic), Noto Naskh Arabic and Noto Sans SC (CJK)
// from registry packages, embedded and subset by pdfkit; a line is cut into runs by font and by the Unicode
// bidirectional algorithm (bidi-js), and the runs are placed left to right in visual order.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Bidi } from 'bidi-js';
import type PDFKit from 'pdfkit';

type Doc = InstanceType<typeof PDFKit>;
export type Weight = 'regular' | 'bold';
type Family = 'latin' | 'arabic' | 'cjk';

const require = createRequire(import.meta.url);
const fontDir = (pkg: string) => path.join(path.dirname(require.resolve(pkg)), '..', 'fonts');

const FILES: Record<Family, Record<Weight, string>> = {
  latin: {
    regular: path.join(fontDir('@embedpdf/fonts-latin'), 'NotoSans-Regular.ttf'),
    bold: path.join(fontDir('@embedpdf/fonts-latin'), 'NotoSans-Bold.ttf'),
  },
  arabic: {
    regular: path.join(fontDir('@embedpdf/fonts-arabic'), 'NotoNaskhArabic-Regular.ttf'),
    bold: path.join(fontDir('@embedpdf/fonts-arabic'), 'NotoNaskhArabic-Bold.ttf'),
  },
  // Noto Sans SC (GB 2312 set: Chinese, kana, full-width forms); Hangul is not in it.
  cjk: {
    regular: path.join(fontDir('@embedpdf/fonts-sc'), 'NotoSansHans-Regular.otf'),
    bold: path.join(fontDir('@embedpdf/fonts-sc'), 'NotoSansHans-Bold.otf'),
  },
};

const ARABIC = /[\p{Script=Arabic}]/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Bopomofo}\u3000-\u303f\uff00-\uffef]/u;
const NEUTRAL = /[\p{Script=Common}\p{Script=Inherited}]/u;
const RTL_SCRIPT = /[\p{Script=Arabic}\p{Script=Hebrew}]/u;

// bidi-js is CommonJS whose module.exports is the factory. Loaded on the first line laid out, not at start-up: an idle
// service that builds no PDF does not hold it (issue 29, idle RSS).
let bidiInstance: Bidi | undefined;
function bidiAlgorithm(): Bidi {
  if (!bidiInstance) {
    const loaded = require('bidi-js') as (() => Bidi) | { default: () => Bidi };
    bidiInstance = (typeof loaded === 'function' ? loaded : loaded.default)();
  }
  return bidiInstance;
}

/** The font families are registered on first use, so a document embeds only the fonts its text needs. */
export function fontName(doc: Doc, family: Family, weight: Weight): string {
  const name = `${family}-${weight}`;
  const registered = doc as Doc & { _registeredFonts: Record<string, unknown> };
  if (!registered._registeredFonts[name]) doc.registerFont(name, FILES[family][weight]);
  return name;
}

function familyOf(char: string, previous: Family): Family {
  if (ARABIC.test(char)) return 'arabic';
  if (CJK.test(char)) return 'cjk';
  // Spaces, digits and punctuation stay with the run they are in (an Arabic phrase keeps its spaces for shaping).
  if (NEUTRAL.test(char)) return previous;
  return 'latin';
}

export type Run = { text: string; family: Family };

/** A one-line text as runs in visual (left-to-right) order; each run's text is what the font lays out. */
export function visualRuns(text: string): Run[] {
  if (!text) return [];
  const chars = [...text];
  // bidi-js works on UTF-16 indices: map them back to code points.
  const bidi = bidiAlgorithm();
  const levels = bidi.getEmbeddingLevels(text, 'auto');
  const order = bidi.getReorderedIndices(text, levels);
  const mirrored = bidi.getMirroredCharactersMap(text, levels.levels);
  const unitToChar: number[] = [];
  chars.forEach((char, index) => {
    for (let unit = 0; unit < char.length; unit += 1) unitToChar.push(index);
  });
  const visual: { char: string; rtl: boolean }[] = [];
  let lastChar = -1;
  for (const unit of order) {
    const index = unitToChar[unit];
    if (index === lastChar) continue;
    lastChar = index;
    const firstUnit = unitToChar.indexOf(index);
    visual.push({ char: mirrored.get(firstUnit) ?? chars[index], rtl: (levels.levels[firstUnit] & 1) === 1 });
  }
  const runs: { chars: string[]; family: Family; rtl: boolean }[] = [];
  let family: Family = 'latin';
  for (const { char, rtl } of visual) {
    family = familyOf(char, family);
    const last = runs.at(-1);
    if (last && last.family === family && last.rtl === rtl) last.chars.push(char);
    else runs.push({ chars: [char], family, rtl });
  }
  // fontkit shapes a right-to-left script from logical order and reverses it itself: hand such runs back reversed.
  return runs.map((run) => {
    const text = run.chars.join('');
    return { text: run.rtl && RTL_SCRIPT.test(text) ? [...text].reverse().join('') : text, family: run.family };
  });
}

/**
 * pdfkit lays text out word by word (a cache per word) and joins the words left to right, which reverses the words of a
 * right-to-left run. Passing features (an empty list: the script's own shaping features still apply) makes it lay out
 * the run whole.
 */
function layoutOf(run: Run): { features?: [] } {
  return run.family === 'arabic' ? { features: [] } : {};
}

export type TextOptions = { size: number; weight?: Weight; color?: string; width?: number; align?: 'left' | 'right' | 'center' };

/**
 * The narrowest advance of a visible glyph in the shipped fonts, in em (DejaVu/Noto "i", "l", "." and "'" are ~0.2-0.3
 * em); a bound with room to spare, so no text that would fit is ever cut by it.
 */
const NARROWEST_EM = 0.1;

/** At most the characters of `text` that could be seen in `width` at `size` (for measuring a cell's natural width). */
export function visiblePart(text: string, width: number, size: number): string {
  const most = Math.ceil(width / (size * NARROWEST_EM)) + 1;
  return text.length <= most ? text : [...text].slice(0, most).join('');
}

/** Width of a one-line text at a size. */
export function textWidth(doc: Doc, text: string, size: number, weight: Weight = 'regular'): number {
  let width = 0;
  for (const run of visualRuns(text))
    width += doc
      .font(fontName(doc, run.family, weight))
      .fontSize(size)
      .widthOfString(run.text, layoutOf(run));
  return width;
}

/** One line at (x, y), cut with "…" to `width` when given, aligned inside it. Never wraps, never moves doc.y. */
export function drawLine(doc: Doc, text: string, x: number, y: number, options: TextOptions): number {
  const weight = options.weight ?? 'regular';
  let shown = text;
  if (options.width !== undefined) {
    // No glyph of the shipped fonts is narrower than NARROWEST_EM: more characters than fit at that width are cut
    // before anything is measured (a 4,000-character cell in a 100 pt column is measured as ~80 characters).
    const visible = visiblePart(text, options.width, options.size);
    const capped = visible !== text;
    if (capped || textWidth(doc, text, options.size, weight) > options.width) {
      const chars = [...visible];
      // The longest prefix that fits with "…", by binary search: ~log2(n) measurements, not n (each measurement of a
      // new prefix is also a new entry in pdfkit's per-word width cache).
      const fits = (n: number) => textWidth(doc, `${chars.slice(0, n).join('')}…`, options.size, weight) <= options.width!;
      let low = 1;
      // Cut already: the visible part with "…" may fit; whole: it does not fit, so with "…" neither.
      let high = capped ? chars.length : chars.length - 1;
      while (low < high) {
        const middle = Math.ceil((low + high) / 2);
        if (fits(middle)) low = middle;
        else high = middle - 1;
      }
      shown = `${chars.slice(0, low).join('').trimEnd()}…`;
    }
  }
  const total = textWidth(doc, shown, options.size, weight);
  let left = x;
  if (options.width !== undefined && options.align === 'right') left = x + options.width - total;
  if (options.width !== undefined && options.align === 'center') left = x + (options.width - total) / 2;
  const savedY = doc.y;
  const savedX = doc.x;
  doc.fillColor(options.color ?? '#1f2933');
  // pdfkit places a line by its top (the font's ascender above the baseline); fonts differ in ascender, so each run is
  // moved to share the Latin font's baseline.
  const ascender = () => (doc as Doc & { _font: { ascender: number } })._font.ascender;
  doc.font(fontName(doc, 'latin', weight));
  const baseline = ascender();
  for (const run of visualRuns(shown)) {
    doc.font(fontName(doc, run.family, weight)).fontSize(options.size);
    const shift = ((baseline - ascender()) / 1000) * options.size;
    doc.text(run.text, left, y + shift, { lineBreak: false, ...layoutOf(run) });
    left += doc.widthOfString(run.text, layoutOf(run));
  }
  doc.x = savedX;
  doc.y = savedY;
  return total;
}

/** Wrapped paragraph text in the UI language (Latin script in every shipped language): plain pdfkit text. */
export function paragraph(doc: Doc, text: string, x: number, y: number, options: TextOptions): void {
  doc
    .font(fontName(doc, 'latin', options.weight ?? 'regular'))
    .fontSize(options.size)
    .fillColor(options.color ?? '#1f2933')
    .text(text, x, y, { width: options.width, align: options.align });
}
