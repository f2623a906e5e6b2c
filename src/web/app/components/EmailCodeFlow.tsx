// The emailed-code flow the public screens share (forgotten password, registration): an address, a 6-digit code sent
// to it (5 minutes), then the code, the screen's own fields and a new password in one form. The screen says what
// sends the code and what the second form does; this component holds the steps, the fields and the problem line.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { t } from '../i18n';
import { Done, Field, NewPasswordField, Problem } from './Field';

/** What the second form sends: the address the code went to, the code as typed (trimmed), the new password. */
export type CodeEntry = { email: string; code: string; password: string };

export function EmailCodeFlow(props: {
  title: string;
  /** A paragraph above the address, when the screen has one. */
  intro?: string;
  /** Asks the service to mail a code to the address (trimmed); a problem to show, or null once it is sent. */
  sendCode: (email: string) => Promise<string | null>;
  /** The screen's own fields between the code and the password (registration: the username). */
  between?: ComponentChildren;
  passwordLabel: string;
  submitLabel: string;
  /** Sends the second form; a problem to show, or null when the screen moved on. */
  submit: (entry: CodeEntry) => Promise<string | null>;
}) {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  async function send(event: Event) {
    event.preventDefault();
    const failed = await props.sendCode(email.trim());
    setProblem(failed);
    if (!failed) setSent(true);
  }

  async function submit(event: Event) {
    event.preventDefault();
    setProblem(await props.submit({ email: email.trim(), code: code.trim(), password }));
  }

  return (
    <section class="narrow">
      <h1>{props.title}</h1>
      {!sent ? (
        <form class="stack" onSubmit={send} noValidate>
          {props.intro && <p>{props.intro}</p>}
          <Field label={t('field.email')}>
            {(id) => <input id={id} type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Problem text={problem} />
          <button type="submit" class="primary">
            {t('forgot.send')}
          </button>
        </form>
      ) : (
        <form class="stack" onSubmit={submit} noValidate>
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
          {props.between}
          <NewPasswordField label={props.passwordLabel} value={password} set={setPassword} />
          <Problem text={problem} />
          <button type="submit" class="primary">
            {props.submitLabel}
          </button>
        </form>
      )}
      <p class="links">
        <a href="/login">{t('login.title')}</a>
      </p>
    </section>
  );
}
