// Analysis → anomalies: the service checks every finished site day by itself and raises what it finds as an alert
// (code energy.anomaly.*, on the alerts screen); an operator can check a finished day now
// (POST /api/analysis/anomalies/check) and sees each finding with its evidence.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Finding } from '../api/types';
import { AnalysisTabs, siteDay } from '../components/analysisParts';
import { Done, Field, Problem } from '../components/Field';
import { label, t } from '../i18n';
import { can } from '../state/session';

export default function Anomalies() {
  const [day, setDay] = useState(siteDay(-1));
  const [findings, setFindings] = useState<Finding[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const operator = can('operator');

  async function check(event: Event) {
    event.preventDefault();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day >= siteDay()) return setProblem(t('anomalies.badDay'));
    setBusy(true);
    const { data, error, response } = await api.POST('/api/analysis/anomalies/check', { body: { day } });
    setBusy(false);
    if (!data) {
      setFindings(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setFindings(data.findings);
    setDone(data.findings.length ? t('anomalies.found', { count: data.findings.length, day }) : t('anomalies.none', { day }));
  }

  return (
    <section class="analysis">
      <h1>{t('anomalies.title')}</h1>
      <AnalysisTabs />
      <p class="muted">{t('anomalies.intro')}</p>
      <p>
        <a href="/alerts">{t('anomalies.toAlerts')}</a>
      </p>
      {operator ? (
        <form class="card stack" onSubmit={check} noValidate aria-busy={busy ? 'true' : undefined}>
          <div class="filters">
            <Field label={t('anomalies.day')} hint={t('anomalies.dayHint')}>
              {(id, hint) => <input id={id} type="date" aria-describedby={hint} max={siteDay(-1)} value={day} onInput={(e) => setDay(e.currentTarget.value)} />}
            </Field>
          </div>
          <Problem text={problem} />
          <Done text={done} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {t('anomalies.check')}
            </button>
          </div>
        </form>
      ) : (
        <p class="notice">{t('anomalies.operatorOnly')}</p>
      )}
      {findings && findings.length > 0 && (
        <ul class="worklist" aria-label={t('anomalies.findings')}>
          {findings.map((f) => (
            <li key={`${f.kind}-${f.target}`} class="alert level-warning" data-kind={f.kind}>
              <div class="row">
                <span class="badge warning">{label('anomalies.kind', f.kind)}</span>
                <strong class="wrap">{f.target}</strong>
                <span class="when muted">{f.day}</span>
              </div>
              <p class="message">{f.message}</p>
              <p class="muted message">{f.detail}</p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
