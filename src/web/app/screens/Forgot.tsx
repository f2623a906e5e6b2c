// Forgotten password: an emailed 6-digit code (5 minutes), then the code and a new password.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { t } from '../i18n';
import { navigate } from '../state/router';
import { signIn } from '../state/session';

export default function Forgot() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  async function send(event: Event) {
    event.preventDefault();
    const { data, error, response } = await api.POST('/api/auth/forgot-password/send-code', { body: { email: email.trim() } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setSent(true);
  }

  async function reset(event: Event) {
    event.preventDefault();
    const { error, response } = await api.POST('/api/auth/forgot-password/reset', { body: { email: email.trim(), code: code.trim(), newPassword: password } });
    if (!response.ok) return setProblem(errorText(error, response.status));
    const failed = await signIn(email.trim(), password);
    if (failed) setProblem(failed);
    else navigate('/', true);
  }

  return (
    <section class="narrow">
      <h1>{t('forgot.title')}</h1>
      {!sent ? (
        <form class="stack" onSubmit={send} noValidate>
          <p>{t('forgot.intro')}</p>
          <Field label={t('field.email')}>
            {(id) => <input id={id} type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Problem text={problem} />
          <button type="submit" class="primary">
            {t('forgot.send')}
          </button>
        </form>
      ) : (
        <form class="stack" onSubmit={reset} noValidate>
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
          <Field label={t('field.newPassword')} hint={t('field.passwordHint')}>
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
            {t('forgot.reset')}
          </button>
        </form>
      )}
      <p class="links">
        <a href="/login">{t('login.title')}</a>
      </p>
    </section>
  );
}
