// A site's administration on its page, for an admin of the site: a second box's quarantine released or discarded
// with the reason, and the site's audit trail (who renamed, revoked, re-admitted it or chose its box, and why).
import { useState } from 'preact/hooks';
import { errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, t } from '../i18n';
import { browserZone } from './parts';
import { fleetGet, fleetSend } from './session';
import type { SiteAuditPage } from './types';

function SecondBox({ id, done }: { id: string; done: () => void }) {
  const [installId, setInstallId] = useState('');
  const [decision, setDecision] = useState<'release' | 'discard'>('discard');
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  async function submit(event: Event) {
    event.preventDefault();
    const answer = await fleetSend('POST', `/api/fleet/sites/${id}/second-box`, { decision, installId: installId.trim(), reason: reason.trim() });
    setProblem(answer.response.ok ? null : errorText(answer.error, answer.response.status));
    setMessage(answer.response.ok ? t(decision === 'release' ? 'fleet.secondBoxReleased' : 'fleet.secondBoxDiscarded') : null);
    if (answer.response.ok) done();
  }
  return (
    <form class="card stack" onSubmit={submit} noValidate>
      <h2>{t('fleet.secondBox')}</h2>
      <p class="muted">{t('fleet.secondBoxIntro')}</p>
      <Field label={t('fleet.installId')}>
        {(fid) => <input id={fid} name="installId" value={installId} onInput={(e) => setInstallId(e.currentTarget.value)} />}
      </Field>
      <fieldset>
        <legend>{t('fleet.decision')}</legend>
        {(['discard', 'release'] as const).map((value) => (
          <label key={value}>
            <input type="radio" name="decision" value={value} checked={decision === value} onChange={() => setDecision(value)} />{' '}
            {t(value === 'release' ? 'fleet.release' : 'fleet.discard')}
          </label>
        ))}
      </fieldset>
      <Field label={t('fleet.reason')}>{(fid) => <textarea id={fid} name="reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />}</Field>
      <Problem text={problem} />
      <Done text={message} />
      <button type="submit" class="primary">
        {t('fleet.decide')}
      </button>
    </form>
  );
}

export function SiteAdmin({ id }: { id: string }) {
  const audit = useApi(() => fleetGet<SiteAuditPage>(`/api/fleet/sites/${id}/audit?pageSize=50`), [id]);
  return (
    <>
      <SecondBox id={id} done={audit.reload} />
      <div class="card">
        <h2>{t('fleet.audit')}</h2>
        <Problem text={audit.problem} />
        {audit.data && audit.data.items.length === 0 && <p class="muted">{t('fleet.auditEmpty')}</p>}
        <ul class="audit">
          {audit.data?.items.map((entry) => (
            <li key={entry.id}>
              {dateTime(entry.at, browserZone)} · <strong>{entry.user}</strong> · {t(`fleet.action_${entry.action}`)}
              {entry.reason && <> · „{entry.reason}"</>}
            </li>
          ))}
        </ul>
      </div>
    </>
  );
}
