// Registration with an emailed code: the account gets the lowest role (viewer) until an admin changes it.
import { useState } from 'preact/hooks';
import { api, errorText, tokens } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { t } from '../i18n';
import { user } from '../state/session';

export default function Register() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [username, setUsername] = useState('');
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  async function send(event: Event) {
    event.preventDefault();
    const { data, error, response } = await api.POST('/api/auth/register/send-code', { body: { email: email.trim() } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setSent(true);
  }

  async function register(event: Event) {
    event.preventDefault();
    const { data, error, response } = await api.POST('/api/auth/register', {
      body: { email: email.trim(), username: username.trim(), code: code.trim(), password },
    });
    if (!data) return setProblem(errorText(error, response.status));
    tokens.set(data.accessToken, data.refreshToken);
    user.value = data.user;
  }

  return (
    <section class="narrow">
      <h1>{t('register.title')}</h1>
      {!sent ? (
        <form class="stack" onSubmit={send} noValidate>
          <Field label={t('field.email')}>
            {(id) => <input id={id} type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Problem text={problem} />
          <button type="submit" class="primary">
            {t('forgot.send')}
          </button>
        </form>
      ) : (
        <form class="stack" onSubmit={register} noValidate>
          <Done text={t('forgot.sent', { email })} />
          <Field label={t('field.code')}>
            {(id) => (
              <input
                id={id}
                inputMode="numeric"
                autocomplete="one-time-code"
                maxLength={6}
                required
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            )}
          </Field>
          <Field label={t('login.username')}>
            {(id) => <input id={id} autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />}
          </Field>
          <Field label={t('login.password')} hint={t('field.passwordHint')}>
            {(id, hint) => (
              <input
                id={id}
                type="password"
                autocomplete="new-password"
                aria-describedby={hint}
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            )}
          </Field>
          <Problem text={problem} />
          <button type="submit" class="primary">
            {t('register.submit')}
          </button>
        </form>
      )}
      <p class="links">
        <a href="/login">{t('login.title')}</a>
      </p>
    </section>
  );
}
