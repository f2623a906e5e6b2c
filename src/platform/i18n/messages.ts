// The texts reports, mails and the wallboard print, one JSON file per language beside this module (en.json is the
// reference: every key, and the fallback for a key or language missing); a new language is one more file.
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../packageRoot.ts';

export const MESSAGES_DIR = path.join(packageRoot, 'src', 'platform', 'i18n');
export const FALLBACK_LANGUAGE = 'en';

export type Dictionary = Readonly<Record<string, string>>;

let dictionaries: Map<string, Dictionary> | undefined;

/** Every language file, read once (a few kB each); a file that is not a flat string map stops here with its name. */
export function languages(): Map<string, Dictionary> {
  if (dictionaries) return dictionaries;
  const found = new Map<string, Dictionary>();
  for (const name of fs
    .readdirSync(MESSAGES_DIR)
    .filter((file) => /^[a-z]{2,3}\.json$/.test(file))
    .sort()) {
    const parsed = JSON.parse(fs.readFileSync(path.join(MESSAGES_DIR, name), 'utf8')) as unknown;
    if (!parsed || typeof parsed !== 'object' || Object.values(parsed).some((value) => typeof value !== 'string')) {
      throw new Error(`${name}: a language file is one JSON object of strings`);
    }
    found.set(name.slice(0, -'.json'.length), parsed as Dictionary);
  }
  if (!found.has(FALLBACK_LANGUAGE)) throw new Error(`${FALLBACK_LANGUAGE}.json is missing from ${MESSAGES_DIR}`);
  dictionaries = found;
  return found;
}

/** The language of a BCP 47 tag that has a file ("de-AT" → "de"), else English. */
export function languageOf(locale: string): string {
  const language = locale.toLowerCase().split(/[-_]/)[0];
  return languages().has(language) ? language : FALLBACK_LANGUAGE;
}

export type Translate = (key: string, values?: Record<string, string | number>) => string;

/** `t(key, values)` for a locale: the language's text, else English, else the key itself, with {name} placeholders filled. */
export function translator(locale: string): Translate {
  const all = languages();
  const own = all.get(languageOf(locale))!;
  const fallback = all.get(FALLBACK_LANGUAGE)!;
  return (key, values = {}) => {
    const text = own[key] ?? fallback[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
  };
}
