// Registration with an emailed code (components/EmailCodeFlow): the account gets the lowest role (viewer) until an
// admin changes it.
import { useState } from 'preact/hooks';
import { api, errorText, tokens } from '../api/client';
import { type CodeEntry, EmailCodeFlow } from '../components/EmailCodeFlow';
import { Field } from '../components/Field';
import { t } from '../i18n';
import { user } from '../state/session';

export default function Register() {
  const [username, setUsername] = useState('');

  async function sendCode(email: string): Promise<string | null> {
    const { data, error, response } = await api.POST('/api/auth/register/send-code', { body: { email } });
    return data ? null : errorText(error, response.status);
  }

  async function register({ email, code, password }: CodeEntry): Promise<string | null> {
    const { data, error, response } = await api.POST('/api/auth/register', { body: { email, username: username.trim(), code, password } });
    if (!data) return errorText(error, response.status);
    tokens.set(data.accessToken, data.refreshToken);
    user.value = data.user;
    return null;
  }

  return (
    <EmailCodeFlow
      title={t('register.title')}
      sendCode={sendCode}
      between={
        <Field label={t('login.username')}>
          {(id) => <input id={id} autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />}
        </Field>
      }
      passwordLabel={t('login.password')}
      submitLabel={t('register.submit')}
      submit={register}
    />
  );
}
