// The first admin's set-up link (issue 53): /first-sign-in#<token>, printed on the box's console and written to
// <data dir>/setup-link. Choosing a password here signs in; the link then works no more (the password file on the box
// stays the fallback until then). The token leaves the address bar at once.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Field, NewPasswordField, Problem } from '../components/Field';
import { t } from '../i18n';
import { navigate } from '../state/router';
import { adoptTokens } from '../state/session';

function takeToken(): string {
  const token = location.hash.slice(1);
  if (token) history.replaceState(history.state, '', location.pathname);
  return token;
}

export default function FirstSignIn() {
  const [token] = useState(takeToken);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [problem, setProblem] = useState<string | null>(token ? null : t('firstSignIn.noToken'));
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    if (password !== repeat) return setProblem(t('firstSignIn.mismatch'));
    setBusy(true);
    const { data, error, response } = await api.POST('/api/auth/setup-link', { body: { token, newPassword: password } });
    setBusy(false);
    if (!data) return setProblem(response.status === 409 ? t('firstSignIn.spent') : errorText(error, response.status));
    await adoptTokens(data.accessToken, data.refreshToken);
    // The same next step as after the forced password change: the site's first-run set-up.
    navigate('/settings?firstRun=1', true);
  }

  return (
    <section class="narrow">
      <h1>{t('firstSignIn.title')}</h1>
      <p>{t('firstSignIn.intro')}</p>
      <form class="stack" onSubmit={submit} noValidate>
        <NewPasswordField label={t('firstSignIn.password')} hint={t('firstSignIn.hint')} name="new-password" value={password} set={setPassword} />
        <Field label={t('firstSignIn.repeat')}>
          {(id) => (
            <input
              id={id}
              name="repeat-password"
              type="password"
              autocomplete="new-password"
              required
              value={repeat}
              onInput={(e) => setRepeat(e.currentTarget.value)}
            />
          )}
        </Field>
        <Problem text={problem} />
        <button type="submit" class="primary" disabled={!token || busy} aria-busy={busy}>
          {t('firstSignIn.submit')}
        </button>
      </form>
    </section>
  );
}
