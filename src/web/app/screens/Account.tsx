// Your account: change your password. Forced on the initial admin's first sign-in (mustChangePassword), so nobody
// needs the generated password from the log again.
import { useState } from 'preact/hooks';
import { api, errorText, tokens } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { t } from '../i18n';
import { navigate } from '../state/router';
import { user } from '../state/session';

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
      <form class="stack" onSubmit={submit} noValidate>
        <h2>{t('account.changePassword')}</h2>
        <Field label={t('field.currentPassword')}>
          {(id) => (
            <input id={id} type="password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
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
              value={next}
              onInput={(e) => setNext(e.currentTarget.value)}
            />
          )}
        </Field>
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
