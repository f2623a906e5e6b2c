// Admin → history import (issue 52): a utility portal's CSV picked, a dry run first (POST /api/energy/import?dryRun=true:
// per meter the period, new and replaced intervals, estimated, empty cells and missing intervals, refused rows with
// their lines, suspect runs), then the import as a background job (POST /api/energy/import/jobs) with a progress bar
// polled from its status resource and a cancel that takes back what was written, and the result.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { paths } from '../api/schema';
import type { ApiError } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { AdminLinks } from '../components/adminLinks';
import { dateTime, num, t } from '../i18n';

type Report = paths['/api/energy/import']['post']['responses'][200]['content']['application/json'];
type Job = paths['/api/energy/import/jobs/{id}']['get']['responses'][200]['content']['application/json'];
/** How often a running job's status is asked (a slice is ~15 ms: the bar moves every poll). */
const POLL_MS = 400;

const csvCall = (text: string) => ({ body: text, bodySerializer: (body: string) => body, headers: { 'content-type': 'text/csv' } });

/** A refusal as the import shows it: the error's sentence and the lines a 400/409 names (details). */
type Refused = Pick<ApiError, 'error' | 'details'>;

/** The lines a 400/409 names (details), one a line, under the error's sentence. */
function Refusal({ error }: { error: Refused }) {
  return (
    <div class="problem" role="alert" data-refusal>
      <p>{error.error}</p>
      {error.details && error.details.length > 0 && (
        <ul>
          {error.details.map((d) => (
            <li key={`${d.path}|${d.message}`}>
              <strong>{d.path}</strong>: {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ReportTable({ report, caption }: { report: Report; caption: string }) {
  return (
    <>
      <table data-report={report.dryRun ? 'dry' : 'written'}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('import.meter')}</th>
            <th scope="col">{t('import.period')}</th>
            <th scope="col" class="n">
              {t('import.new')}
            </th>
            <th scope="col" class="n">
              {t('import.overlapping')}
            </th>
            <th scope="col" class="n">
              {t('import.estimated')}
            </th>
            <th scope="col" class="n">
              {t('import.missing')}
            </th>
            <th scope="col" class="n">
              {t('import.refused')}
            </th>
            <th scope="col" class="n">
              {t('import.suspect')}
            </th>
            <th scope="col" class="n">
              {t('import.quantity')}
            </th>
          </tr>
        </thead>
        <tbody>
          {report.meters.map((m) => (
            <tr key={m.meterId} data-meter={m.meterId}>
              <th scope="row" class="wrap">
                <a href={`/meters/${m.meterId}`}>{m.name}</a>
              </th>
              <td>{m.from ? `${m.from} – ${m.to}` : '–'}</td>
              <td class="n" data-field="new">
                {num(m.intervals.new, 0)}
              </td>
              <td class="n" data-field="overlapping">
                {num(m.intervals.overlapping, 0)}
              </td>
              <td class="n" data-field="estimated">
                {num(m.intervals.estimated, 0)}
              </td>
              <td class="n" data-field="missing">
                {num(m.missing, 0)}
                {m.empty > 0 && <small class="muted"> {t('import.emptyCells', { n: num(m.empty, 0) })}</small>}
              </td>
              <td class="n" data-field="refused">
                {num(m.intervals.refused, 0)}
              </td>
              <td class="n" data-field="suspect">
                {num(m.suspect.runs, 0)}
              </td>
              <td class="n">
                {num(m.quantity, 2)} {m.unit}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {report.meters.map(
        (m) =>
          (m.refused.length > 0 || m.suspect.listed.length > 0 || m.gaps > 0) && (
            <div key={m.meterId} class="stack" data-details={m.meterId}>
              <h3>{m.name}</h3>
              {m.gaps > 0 && <p class="muted">{t('import.gaps', { n: num(m.gaps, 0) })}</p>}
              {m.refused.length > 0 && (
                <ul aria-label={t('import.refusedRows', { meter: m.name })} data-refused={m.meterId}>
                  {m.refused.map((r) => (
                    <li key={r.line}>{t('import.line', { line: r.line, message: r.message })}</li>
                  ))}
                </ul>
              )}
              {m.suspect.listed.length > 0 && (
                <ul aria-label={t('import.suspectRuns', { meter: m.name })} data-suspects={m.meterId}>
                  {m.suspect.listed.map((run) => (
                    <li key={run.startAt}>
                      {t('import.suspectRun', {
                        from: dateTime(run.startAt),
                        to: dateTime(run.endAt),
                        hours: num(run.intervals / 4, 1),
                        value: num(run.value, 3),
                        unit: m.unit,
                      })}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          ),
      )}
    </>
  );
}

export default function AdminImport() {
  const [file, setFile] = useState<File | null>(null);
  const [text, setText] = useState<string | null>(null);
  const [replace, setReplace] = useState(false);
  const [dry, setDry] = useState<Report | null>(null);
  const [refusal, setRefusal] = useState<Refused | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [job, setJob] = useState<Job | null>(null);

  const running = job !== null && (job.state === 'running' || job.state === 'cancelling');

  usePoll(job, running, setJob, setProblem);

  function reset() {
    setDry(null);
    setRefusal(null);
    setProblem(null);
    setJob(null);
  }

  async function check(event: Event) {
    event.preventDefault();
    reset();
    if (!file) return setProblem(t('import.needFile'));
    setBusy(true);
    const body = await file.text();
    setText(body);
    const { data, error, response } = await api.POST('/api/energy/import', { params: { query: { dryRun: true, replace } }, ...csvCall(body) });
    setBusy(false);
    if (data) return setDry(data);
    if (error && typeof error === 'object' && 'error' in error) return setRefusal(error);
    setProblem(errorText(error, response.status));
  }

  async function start() {
    if (!text || !dry) return;
    setBusy(true);
    setProblem(null);
    setRefusal(null);
    const { data, error, response } = await api.POST('/api/energy/import/jobs', { params: { query: { replace } }, ...csvCall(text) });
    setBusy(false);
    if (data) return setJob(data);
    if (error && typeof error === 'object' && 'error' in error) return setRefusal(error);
    setProblem(errorText(error, response.status));
  }

  async function cancel() {
    if (!job) return;
    const { data, error, response } = await api.POST('/api/energy/import/jobs/{id}/cancel', { params: { path: { id: job.id } } });
    if (data) setJob(data);
    else if (response.status !== 409) setProblem(errorText(error, response.status));
  }

  return (
    <section>
      <h1>{t('import.title')}</h1>
      <AdminLinks here="/admin/import" />
      <p class="muted">{t('import.intro')}</p>
      <Problem text={problem} />
      {refusal && <Refusal error={refusal} />}
      <FileForm
        running={running}
        busy={busy}
        replace={replace}
        onSubmit={check}
        onFile={(chosen) => {
          setFile(chosen);
          setText(null);
          reset();
        }}
        onReplace={(on) => {
          setReplace(on);
          setDry(null);
        }}
      />

      {dry && <DryRun dry={dry} job={job} busy={busy} replace={replace} onStart={start} />}

      {job && <JobSection job={job} running={running} onCancel={cancel} />}
    </section>
  );
}

/** A running job's status, polled until it ends. */
function usePoll(job: Job | null, running: boolean, setJob: (job: Job) => void, setProblem: (problem: string) => void) {
  useEffect(() => {
    if (!job || !running) return;
    let live = true;
    const timer = setTimeout(async () => {
      const { data, error, response } = await api.GET('/api/energy/import/jobs/{id}', { params: { path: { id: job.id } } });
      if (!live) return;
      if (data) setJob(data);
      else setProblem(errorText(error, response.status));
    }, POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [job, running]);
}

/** The file picked, whether stored intervals are replaced, and the dry run asked for. */
function FileForm(props: {
  running: boolean;
  busy: boolean;
  replace: boolean;
  onSubmit: (event: Event) => void;
  onFile: (file: File | null) => void;
  onReplace: (on: boolean) => void;
}) {
  const { running, busy, replace, onSubmit, onFile, onReplace } = props;
  return (
    <form class="card stack" onSubmit={onSubmit} noValidate aria-labelledby="import-file-heading">
      <h2 id="import-file-heading">{t('import.fileTitle')}</h2>
      <Field label={t('import.file')} hint={t('import.fileHint')}>
        {(id, describedBy) => (
          <input
            id={id}
            type="file"
            accept=".csv,text/csv,text/plain"
            aria-describedby={describedBy}
            disabled={running}
            onChange={(e) => onFile(e.currentTarget.files?.[0] ?? null)}
          />
        )}
      </Field>
      <label class="check">
        <input type="checkbox" checked={replace} disabled={running} onChange={(e) => onReplace(e.currentTarget.checked)} /> {t('import.replace')}
      </label>
      <button type="submit" disabled={busy || running}>
        {t('import.check')}
      </button>
    </form>
  );
}

/** What the import would write, and the import started when the file is accepted. */
function DryRun({ dry, job, busy, replace, onStart }: { dry: Report; job: Job | null; busy: boolean; replace: boolean; onStart: () => void }) {
  const overlaps = dry.meters.reduce((sum, m) => sum + m.intervals.overlapping, 0);
  return (
    <section class="card stack" aria-labelledby="import-dry-heading" data-section="dry-run">
      <h2 id="import-dry-heading">{t('import.dryTitle')}</h2>
      <p data-field="dry-summary">
        {t('import.drySummary', {
          rows: num(dry.rows, 0),
          meters: num(dry.meters.length, 0),
          form: t(dry.form === 'counter' ? 'import.formCounter' : 'import.formIntervals'),
        })}
      </p>
      <ReportTable report={dry} caption={t('import.dryCaption')} />
      {dry.accepted ? (
        <>
          {overlaps > 0 && <p class="notice warn">{t('import.willReplace', { n: num(overlaps, 0) })}</p>}
          {!job && (
            <button type="button" onClick={onStart} disabled={busy}>
              {t('import.start')}
            </button>
          )}
        </>
      ) : (
        <p class="notice warn" data-notice="not-accepted">
          {overlaps > 0 && !replace ? t('import.overlapRefused', { n: num(overlaps, 0) }) : t('import.refusedFile')}
        </p>
      )}
    </section>
  );
}

/** The import's progress with its cancel while it runs, then its outcome and what it wrote. */
function JobSection({ job, running, onCancel }: { job: Job; running: boolean; onCancel: () => void }) {
  const percent = job.total > 0 ? Math.round((100 * job.done) / job.total) : 0;
  return (
    <section class="card stack" aria-labelledby="import-job-heading" data-section="job" data-state={job.state}>
      <h2 id="import-job-heading">{t('import.jobTitle')}</h2>
      {running && (
        <>
          <label for="import-progress">{t(job.state === 'cancelling' ? 'import.cancelling' : 'import.progress', { percent })}</label>
          <progress id="import-progress" max={100} value={percent} />
          <button type="button" class="secondary" onClick={onCancel} disabled={job.state === 'cancelling'}>
            {t('import.cancel')}
          </button>
        </>
      )}
      <Done
        text={
          job.state === 'done'
            ? t('import.done', { rows: num(job.rows, 0), meters: num(job.meters, 0) })
            : job.state === 'cancelled'
              ? t('import.cancelled', { days: num(job.undone ?? 0, 0) })
              : null
        }
      />
      {job.state === 'failed' && job.error && <Refusal error={job.error} />}
      {job.report && (
        <>
          <ReportTable report={job.report} caption={t('import.writtenCaption')} />
          {job.report.meters.some((m) => m.suspect.runs > 0) && (
            <p>
              <a href="/suspect-runs">{t('import.toSuspects')}</a>
            </p>
          )}
        </>
      )}
    </section>
  );
}
