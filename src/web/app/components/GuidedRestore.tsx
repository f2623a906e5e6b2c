// The guided restore (issue 53): the consequences said and confirmed, then the service stops, restores and starts
// again while this page follows GET /api/health (public: no session needed while the database is swapped) and shows
// each step; at the end everyone signs in again. The service side: src/operations/backup/restoreRoutes.ts.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer } from '../api/types';
import { Problem } from './Field';
import { dateTime, t, type Key } from '../i18n';
import { signOut } from '../state/session';

type Step = 'checked' | 'stopping' | 'restoring' | 'starting' | 'sign-in';
const STEPS: Step[] = ['checked', 'stopping', 'restoring', 'starting', 'sign-in'];
const STEP_TEXT: Record<Step, Key> = {
  checked: 'restore.stepChecked',
  stopping: 'restore.stepStopping',
  restoring: 'restore.stepRestoring',
  starting: 'restore.stepStarting',
  'sign-in': 'restore.stepSignIn',
};

/** One look at the service: down (no answer, or 503 while it restores) or up since `uptimeSec`. */
async function probe(): Promise<{ up: false } | { up: true; uptimeSec: number }> {
  try {
    const response = await fetch('/api/health', { cache: 'no-store' });
    if (!response.ok) return { up: false };
    // The generated answer, read loosely: the process answering may be the one before the restart or the new one.
    const body = (await response.json()) as Partial<Answer<'/api/health'>>;
    return { up: true, uptimeSec: body.uptimeSec ?? Number.POSITIVE_INFINITY };
  } catch {
    return { up: false };
  }
}

export function GuidedRestore({ name, createdAt, onCancel }: { name: string; createdAt: string; onCancel: () => void }) {
  const [understood, setUnderstood] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  /** How far it got: the index in STEPS of the step under way; -1 before the request. */
  const [reached, setReached] = useState(-1);
  const [sentAt, setSentAt] = useState(0);

  async function restore() {
    setProblem(null);
    const { data, error, response } = await api.POST('/api/system/backups/{name}/restore', { params: { path: { name } }, body: { confirm: name } });
    if (!data) return setProblem(errorText(error, response.status));
    setSentAt(Date.now());
    setReached(1);
  }

  // Following the service: down (step 2 done, restoring), then up again with an uptime younger than the request.
  useEffect(() => {
    if (reached < 1 || reached >= 4) return;
    let stop = false;
    const timer = setInterval(async () => {
      const seen = await probe();
      if (stop) return;
      if (!seen.up) setReached((at) => Math.max(at, 2));
      else if (seen.uptimeSec * 1000 < Date.now() - sentAt + 1000) setReached(4);
    }, 1000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [reached >= 1 && reached < 4, sentAt]);

  if (reached < 0) {
    return (
      <section class="stack notice warn" aria-labelledby="restore-heading" data-section="guided-restore">
        <h3 id="restore-heading">{t('restore.title', { when: dateTime(createdAt) })}</h3>
        <ul>
          <li>{t('restore.replaces', { when: dateTime(createdAt) })}</li>
          <li>{t('restore.stops')}</li>
          <li>{t('restore.signIn')}</li>
        </ul>
        <label>
          <input type="checkbox" checked={understood} onChange={(event) => setUnderstood((event.target as HTMLInputElement).checked)} />{' '}
          {t('restore.understood')}
        </label>
        <div class="row">
          <button type="button" class="primary" disabled={!understood} onClick={restore}>
            {t('restore.confirm')}
          </button>{' '}
          <button type="button" onClick={onCancel}>
            {t('restore.cancel')}
          </button>
        </div>
        <Problem text={problem} />
      </section>
    );
  }
  return (
    <section class="stack" aria-labelledby="restore-heading" data-section="guided-restore" data-reached={STEPS[reached]}>
      <h3 id="restore-heading">{t('restore.underway', { name })}</h3>
      <ol aria-live="polite">
        {STEPS.map((step, index) => (
          <li key={step} data-step={step} data-state={index < reached ? 'done' : index === reached ? 'now' : 'later'}>
            {index < reached ? '✓ ' : index === reached ? '… ' : ''}
            {t(STEP_TEXT[step])}
          </li>
        ))}
      </ol>
      {reached === 4 && (
        <button type="button" class="primary" onClick={() => signOut()}>
          {t('restore.signInAgain')}
        </button>
      )}
    </section>
  );
}
