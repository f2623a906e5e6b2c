// Your account: your language and theme (kept on the server, so every device you sign in on gets them; the browser's
// choice until you set one), and your password. The password is forced on the initial admin's first sign-in
// (mustChangePassword), so nobody needs the generated password from the log again.
import { useState } from 'preact/hooks';
import { api, errorText, tokens } from '../api/client';
import { Done, Field, NewPasswordField, Problem } from '../components/Field';
import { browserLanguage, type Language, LANGUAGES, t } from '../i18n';
import { savePreferences } from '../state/preferences';
import { navigate } from '../state/router';
import { user } from '../state/session';
import type { Theme } from '../state/theme';

/** Each language in its own words (a person who cannot read the current one still finds theirs). */
const OWN_NAMES: Record<Language, string> = { en: 'English', de: 'Deutsch', fr: 'Français', es: 'Español' };

function PreferencesForm() {
  const me = user.value!;
  const [language, setLanguage] = useState<Language | ''>(me.language ?? '');
  const [theme, setTheme] = useState<Theme | ''>(me.theme ?? '');
  const [problem, setProblem] = useState<string | null>(null);
  // A flag, not the text: the words are those of the language just chosen, which loads after the answer.
  const [done, setDone] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setDone(false);
    const saved = await savePreferences({ language: language || null, theme: theme || null });
    if (!saved.ok) return setProblem(errorText(saved.error, saved.status));
    setProblem(null);
    setDone(true);
  }
  return (
    <form class="stack" onSubmit={submit} data-form="preferences">
      <h2>{t('account.preferences')}</h2>
      <p class="muted">{t('account.preferencesHint')}</p>
      <Field label={t('field.language')}>
        {(id) => (
          <select id={id} name="language" value={language} onChange={(e) => setLanguage(e.currentTarget.value as Language | '')}>
            <option value="">{t('account.browserChoice', { choice: OWN_NAMES[browserLanguage] })}</option>
            {LANGUAGES.map((code) => (
              <option key={code} value={code} lang={code}>
                {OWN_NAMES[code]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('field.theme')}>
        {(id) => (
          <select id={id} name="theme" value={theme} onChange={(e) => setTheme(e.currentTarget.value as Theme | '')}>
            <option value="">
              {t('account.browserChoice', { choice: t(window.matchMedia('(prefers-color-scheme: dark)').matches ? 'theme.dark' : 'theme.light') })}
            </option>
            <option value="light">{t('theme.light')}</option>
            <option value="dark">{t('theme.dark')}</option>
          </select>
        )}
      </Field>
      <Problem text={problem} />
      <Done text={done ? t('account.preferencesSaved') : null} />
      <button type="submit" class="primary">
        {t('account.savePreferences')}
      </button>
    </form>
  );
}

export default function Account() {
  const me = user.value!;
  const forced = me.mustChangePassword === true;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setDone(null);
    if (next !== again) return setProblem(t('account.mismatch'));
    const { data, error, response } = await api.PUT('/api/users/{id}/password', {
      params: { path: { id: me.id } },
      body: { currentPassword: current, newPassword: next },
    });
    if (!response.ok) return setProblem(errorText(error, response.status));
    // The change ended every session of this user; this device keeps its own with the pair the answer carries.
    if (data?.accessToken && data.refreshToken) tokens.set(data.accessToken, data.refreshToken);
    setProblem(null);
    setCurrent('');
    setNext('');
    setAgain('');
    user.value = { ...me, mustChangePassword: false };
    if (forced) navigate(me.role === 'admin' ? '/settings?firstRun=1' : '/', true);
    else setDone(t('account.changed'));
  }

  return (
    <section class="narrow">
      <h1>{forced ? t('account.forcedTitle') : t('nav.account')}</h1>
      {forced && <p class="notice">{t('account.forcedText')}</p>}
      <p class="muted">{t('account.who', { username: me.username, role: t(`role.${me.role}`) })}</p>
      {!forced && <PreferencesForm />}
      <form class="stack" onSubmit={submit} noValidate>
        <h2>{t('account.changePassword')}</h2>
        <Field label={t('field.currentPassword')}>
          {(id) => (
            <input id={id} type="password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
          )}
        </Field>
        <NewPasswordField label={t('field.newPassword')} value={next} set={setNext} />
        <Field label={t('field.repeatPassword')}>
          {(id) => <input id={id} type="password" autocomplete="new-password" required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />}
        </Field>
        <Problem text={problem} />
        <Done text={done} />
        <button type="submit" class="primary">
          {t('account.save')}
        </button>
      </form>
    </section>
  );
}
