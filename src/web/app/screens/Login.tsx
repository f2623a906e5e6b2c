// Sign-in: username or email and password, or a configured provider through the popup flow (SPEC Authentication 8):
// the popup posts its outcome to this window; "bind_required" asks for the existing account's password or creates one.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, sessionEnded } from '../api/client';
import type { PopupOutcome, Provider } from '../api/types';
import { Field, Problem } from '../components/Field';
import { t } from '../i18n';
import { adoptTokens, signIn } from '../state/session';

type Bind = { bindToken: string; provider: string; suggested?: string };

export default function Login() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<Provider[]>([]);
  const [bind, setBind] = useState<Bind | null>(null);

  useEffect(() => {
    api.GET('/api/auth/oauth/providers').then(({ data }) => setProviders(data?.providers ?? []));
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== location.origin || !event.data || typeof event.data !== 'object') return;
      // Another message of this origin has no such status and is left alone; the fields are checked as before.
      const outcome = event.data as PopupOutcome;
      if (outcome.status === 'linked' && outcome.accessToken && outcome.refreshToken) adoptTokens(outcome.accessToken, outcome.refreshToken);
      else if (outcome.status === 'bind_required' && outcome.bindToken)
        setBind({ bindToken: outcome.bindToken, provider: outcome.profile?.provider ?? '', suggested: outcome.profile?.username });
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    const failed = bind ? await bindAccount(bind.bindToken, username, password) : await signIn(username.trim(), password);
    setBusy(false);
    if (failed) setProblem(failed);
  }

  async function withProvider(name: string) {
    setProblem(null);
    // Opened before the await so the browser treats it as the click's popup.
    const popup = window.open('about:blank', 'ems-oauth', 'width=520,height=640');
    const { data, error, response } = await api.GET('/api/auth/oauth/{provider}/authorize', { params: { path: { provider: name } } });
    if (!data) {
      popup?.close();
      return setProblem(errorText(error, response.status));
    }
    if (popup) popup.location.href = data.url;
    else setProblem(t('login.popupBlocked'));
  }

  async function createAccount() {
    if (!bind) return;
    const { data, error, response } = await api.POST('/api/auth/oauth/register-and-bind', { body: { bindToken: bind.bindToken } });
    if (!data) return setProblem(errorText(error, response.status));
    await adoptTokens(data.accessToken, data.refreshToken);
  }

  return (
    <section class="narrow">
      <h1>{t('login.title')}</h1>
      {sessionEnded.value && (
        <p class="notice warn" role="status" data-notice="session-ended">
          {t('login.sessionEnded')}
        </p>
      )}
      {bind && <p>{t('login.bindIntro', { provider: bind.provider })}</p>}
      <form onSubmit={submit} class="stack" noValidate>
        <Field label={t('login.username')}>
          {(id) => <input id={id} name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />}
        </Field>
        <Field label={t('login.password')}>
          {(id) => (
            <input
              id={id}
              name="password"
              type="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
        </Field>
        <Problem text={problem} />
        <button type="submit" class="primary" disabled={busy}>
          {bind ? t('login.bind') : t('login.submit')}
        </button>
      </form>
      {bind && (
        <p>
          <button type="button" onClick={createAccount}>
            {t('login.createFromProvider')}
          </button>
        </p>
      )}
      {providers.length > 0 && !bind && (
        <div class="providers">
          <p class="muted">{t('login.or')}</p>
          {providers.map((provider) => (
            <button type="button" key={provider.name} onClick={() => withProvider(provider.name)}>
              {t('login.with', { provider: provider.displayName })}
            </button>
          ))}
        </div>
      )}
      <p class="links">
        <a href="/forgot">{t('login.forgot')}</a>
        <a href="/register">{t('login.register')}</a>
        <a href="/wallboard">{t('nav.wallboard')}</a>
      </p>
    </section>
  );
}

async function bindAccount(bindToken: string, username: string, password: string): Promise<string | null> {
  const { data, error, response } = await api.POST('/api/auth/oauth/bind', { body: { bindToken, username, password } });
  if (!data) return errorText(error, response.status);
  await adoptTokens(data.accessToken, data.refreshToken);
  return null;
}
