// The person's own language and theme (issue 53), kept on the server with the user so a second device gets them: applied
// whenever the signed-in user changes (sign-in, a resumed session, a save on the account screen). A person who chose none
// keeps the browser's (its languages, its colour scheme); the header's theme button saves its choice for the person.
import { api } from '../api/client';
import { browserLanguage, type Language, language, loadLanguage } from '../i18n';
import { user } from './session';
import { setTheme, type Theme, theme } from './theme';

export type Preferences = { language: Language | null; theme: Theme | null };

let applied: string | null = null;
user.subscribe((person) => {
  if (!person) {
    applied = null;
    return;
  }
  const key = `${person.id}:${person.language ?? ''}:${person.theme ?? ''}`;
  if (key === applied) return;
  applied = key;
  const wanted = person.language ?? browserLanguage;
  if (wanted !== language.value) void loadLanguage(wanted);
  if (person.theme && person.theme !== theme.value) setTheme(person.theme);
});

/** Saves the person's choice (null: the browser's) and applies it; the error text when the service refused. */
export async function savePreferences(next: Partial<Preferences>): Promise<{ ok: true } | { ok: false; status: number; error: unknown }> {
  const me = user.value;
  if (!me) return { ok: false, status: 401, error: null };
  const { data, error, response } = await api.PUT('/api/users/{id}', { params: { path: { id: me.id } }, body: next });
  if (!data) return { ok: false, status: response.status, error };
  if (next.theme === null) setTheme(null);
  user.value = { ...me, language: data.language, theme: data.theme };
  return { ok: true };
}
