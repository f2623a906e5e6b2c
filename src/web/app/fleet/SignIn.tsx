// Signing in to the fleet: a name (or email) and password, the organisation's single sign-on when the fleet has one,
// an invitation (set a password, then in), or the printed access token (the first admin's way in).
import { useState } from 'preact/hooks';
import { Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { type Key, t } from '../i18n';
import { acceptInvitation, fleetGet, signInFleet, signInWithPassword, ssoProblem } from './session';
import type { SignInOptions } from './types';

const SSO_PROBLEMS: Record<string, Key> = { sso_unknown_user: 'fleet.ssoUnknown', sso_failed: 'fleet.ssoFailed' };

/** The words for a refused sign-in: wrong pair, locked out, or the status. */
function refusal(status: number, wrong: Key): string {
  if (status === 401 || status === 400) return t(wrong);
  if (status === 429) return t('fleet.throttled');
  return `HTTP ${status}`;
}

function TextField(props: {
  label: string;
  name: string;
  type?: 'text' | 'password';
  autocomplete: string;
  value: string;
  set: (value: string) => void;
  hint?: string;
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id, describedBy) => (
        <input
          id={id}
          name={props.name}
          {...({ type: props.type ?? 'text' } as { type: 'text' })}
          autocomplete={props.autocomplete}
          aria-describedby={describedBy}
          required
          value={props.value}
          onInput={(e) => props.set(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

function PasswordForm() {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    if (!name.trim() || !password) return setProblem(t('fleet.passwordMissing'));
    setBusy(true);
    setProblem(null);
    const status = await signInWithPassword(name.trim(), password);
    setBusy(false);
    if (status !== null) setProblem(refusal(status, 'fleet.passwordRefused'));
  }
  return (
    <form onSubmit={submit} class="stack" noValidate aria-label={t('fleet.signInTitle')}>
      <TextField label={t('fleet.nameOrEmail')} name="username" autocomplete="username" value={name} set={setName} />
      <TextField label={t('fleet.password')} name="password" type="password" autocomplete="current-password" value={password} set={setPassword} />
      <Problem text={problem} />
      <button type="submit" class="primary" disabled={busy}>
        {t('login.submit')}
      </button>
    </form>
  );
}

function InvitationForm() {
  const [invitation, setInvitation] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  async function submit(event: Event) {
    event.preventDefault();
    if (!invitation.trim() || password.length < 8) return setProblem(t('fleet.invitationMissing'));
    setProblem(null);
    const status = await acceptInvitation(invitation.trim(), password);
    if (status !== null) setProblem(refusal(status, 'fleet.invitationRefused'));
  }
  return (
    <form onSubmit={submit} class="stack" noValidate>
      <TextField label={t('fleet.invitation')} name="invitation" autocomplete="off" value={invitation} set={setInvitation} hint={t('fleet.invitationHint')} />
      <TextField label={t('fleet.newPassword')} name="new-password" type="password" autocomplete="new-password" value={password} set={setPassword} />
      <Problem text={problem} />
      <button type="submit">{t('fleet.invitationAccept')}</button>
    </form>
  );
}

function TokenForm() {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  async function submit(event: Event) {
    event.preventDefault();
    if (!token.trim()) return setProblem(t('fleet.tokenMissing'));
    setProblem(null);
    const status = await signInFleet(token.trim());
    if (status !== null) setProblem(status === 401 ? t('fleet.tokenRefused') : `HTTP ${status}`);
  }
  return (
    <form onSubmit={submit} class="stack" noValidate>
      <TextField label={t('fleet.token')} name="token" type="password" autocomplete="off" value={token} set={setToken} hint={t('fleet.tokenHint')} />
      <Problem text={problem} />
      <button type="submit">{t('fleet.tokenSubmit')}</button>
    </form>
  );
}

export function SignIn() {
  const options = useApi(() => fleetGet<SignInOptions>('/api/fleet/auth/options'), []);
  const sso = options.data?.sso;
  const ssoError = ssoProblem.value;
  return (
    <section class="narrow">
      <h1>{t('fleet.signInTitle')}</h1>
      <p>{t('fleet.signInIntro')}</p>
      <Problem text={ssoError ? t(SSO_PROBLEMS[ssoError] ?? 'fleet.ssoFailed') : null} />
      <PasswordForm />
      {sso && (
        <p>
          <a class="button" href="/api/fleet/auth/sso">
            {t('fleet.ssoWith', { name: sso.name })}
          </a>
        </p>
      )}
      <details>
        <summary>{t('fleet.haveInvitation')}</summary>
        <InvitationForm />
      </details>
      <details>
        <summary>{t('fleet.useToken')}</summary>
        <TokenForm />
      </details>
    </section>
  );
}
