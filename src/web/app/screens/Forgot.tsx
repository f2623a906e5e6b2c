// Forgotten password: an emailed 6-digit code (5 minutes), then the code and a new password (components/EmailCodeFlow).
import { api, errorText } from '../api/client';
import { type CodeEntry, EmailCodeFlow } from '../components/EmailCodeFlow';
import { t } from '../i18n';
import { navigate } from '../state/router';
import { signIn } from '../state/session';

export default function Forgot() {
  async function sendCode(email: string): Promise<string | null> {
    const { data, error, response } = await api.POST('/api/auth/forgot-password/send-code', { body: { email } });
    return data ? null : errorText(error, response.status);
  }

  async function reset({ email, code, password }: CodeEntry): Promise<string | null> {
    const { error, response } = await api.POST('/api/auth/forgot-password/reset', { body: { email, code, newPassword: password } });
    if (!response.ok) return errorText(error, response.status);
    const failed = await signIn(email, password);
    if (!failed) navigate('/', true);
    return failed;
  }

  return (
    <EmailCodeFlow
      title={t('forgot.title')}
      intro={t('forgot.intro')}
      sendCode={sendCode}
      passwordLabel={t('field.newPassword')}
      submitLabel={t('forgot.reset')}
      submit={reset}
    />
  );
}
