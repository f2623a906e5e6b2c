// The point mapping (issue 54, admins): each gateway code with its suggested equipment and Brick class (from its name
// and unit), to confirm or change, one or many at once; a unit that contradicts the class is refused by the API, the
// row saying which field. The model goes out and comes in as CSV or Brick Turtle (all or nothing, a bad line named).
import { useState } from 'preact/hooks';
import { api, authFetch, errorText } from '../api/client';
import type { Answer, Body } from '../api/types';
import { AdminLinks } from '../components/adminLinks';
import { Done, Field, Problem } from '../components/Field';
import { saveBlob } from '../components/saveFile';
import { useApi } from '../components/useApi';
import { t } from '../i18n';

const TYPES = ['AHU', 'VAV', 'Chiller', 'HotWaterLoop', 'Zone', 'Meter'] as const;
type EquipmentType = (typeof TYPES)[number];
type Row = Body<'/api/fdd/points/{code}', 'put'> & { equipmentType: EquipmentType };
type Suggestion = Answer<'/api/fdd/points/suggestions'>[number];

async function download(path: string, name: string): Promise<string | null> {
  const response = await authFetch(new Request(`${location.origin}${path}`));
  if (!response.ok) return `HTTP ${response.status}`;
  saveBlob(await response.blob(), name);
  return null;
}

/** The rows as edited (a suggestion until changed) and the codes selected; an edit selects its row. */
function useEdits(suggestions: Suggestion[]) {
  const [edits, setEdits] = useState<Record<string, Row>>({});
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const rowOf = (code: string): Row => {
    const s = suggestions.find((x) => x.code === code)!;
    return (
      edits[code] ?? {
        equipment: s.equipment ?? '',
        equipmentType: (s.equipmentType ?? 'AHU') as EquipmentType,
        brickClass: s.brickClass ?? '',
        unit: s.unit ?? '',
      }
    );
  };
  const edit = (code: string, change: Partial<Row>) => {
    setEdits({ ...edits, [code]: { ...rowOf(code), ...change } });
    setSelected(new Set(selected).add(code));
  };
  const toggle = (code: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(code);
    else next.delete(code);
    setSelected(next);
  };
  return { edits, setEdits, selected, setSelected, rowOf, edit, toggle };
}

export default function FddMapping() {
  const list = useApi(() => api.GET('/api/fdd/points/suggestions'));
  const suggestions = list.data ?? [];
  const { edits, setEdits, selected, setSelected, rowOf, edit, toggle } = useEdits(suggestions);
  const [rowProblems, setRowProblems] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);

  const classes = [...new Set(suggestions.map((s) => s.brickClass).filter((c): c is string => !!c))].sort();
  const suggested = suggestions.filter((s) => !s.mapped && s.equipment && s.brickClass).map((s) => s.code);

  async function confirm(event: Event) {
    event.preventDefault();
    setBusy(true);
    const problems: Record<string, string> = {};
    let confirmed = 0;
    for (const code of selected) {
      const row = rowOf(code);
      const { error, response } = await api.PUT('/api/fdd/points/{code}', { params: { path: { code } }, body: row });
      if (response.ok) confirmed++;
      else problems[code] = errorText(error, response.status);
    }
    setBusy(false);
    setRowProblems(problems);
    const failed = Object.keys(problems).length;
    setProblem(failed ? t('fddMapping.refused', { count: failed }) : null);
    setDone(confirmed ? t('fddMapping.confirmed', { count: confirmed }) : null);
    setSelected(new Set(Object.keys(problems)));
    setEdits(Object.fromEntries(Object.entries(edits).filter(([code]) => problems[code])));
    list.reload();
  }

  async function importFile(event: Event) {
    event.preventDefault();
    if (!file) return setProblem(t('fddMapping.needFile'));
    const text = await file.text();
    const turtle = /\.ttl$/i.test(file.name) || /^\s*(@prefix|prefix)\b/i.test(text);
    const answer = turtle
      ? await api.POST('/api/fdd/model.ttl', { body: text as never, bodySerializer: (body: string) => body, headers: { 'content-type': 'text/turtle' } })
      : await api.POST('/api/fdd/points/import', { body: text as never, bodySerializer: (body: string) => body, headers: { 'content-type': 'text/csv' } });
    if (!answer.data) {
      setDone(null);
      return setProblem(errorText(answer.error, answer.response.status));
    }
    setProblem(null);
    setDone(t('fddMapping.imported', { count: answer.data.imported }));
    list.reload();
  }

  return (
    <section>
      <AdminLinks here="/admin/fdd-mapping" />
      <h1>{t('fddMapping.title')}</h1>
      <p class="muted">{t('fddMapping.intro')}</p>
      <Problem text={problem ?? list.problem} />
      <Done text={done} />
      <ExportButtons setProblem={setProblem} />
      <ImportForm onSubmit={importFile} setFile={setFile} />
      <form onSubmit={confirm}>
        <div class="actions">
          <button type="button" onClick={() => setSelected(new Set([...selected, ...suggested]))} disabled={suggested.length === 0}>
            {t('fddMapping.selectSuggested', { count: suggested.length })}
          </button>{' '}
          <button type="submit" class="primary" disabled={busy || selected.size === 0}>
            {t('fddMapping.confirm', { count: selected.size })}
          </button>
        </div>
        <datalist id="fdd-classes">
          {classes.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
        <div class="table-wrap">
          <table data-table="fdd-mapping">
            <caption>{t('fddMapping.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('fddMapping.select')}</th>
                <th scope="col">{t('fddMapping.code')}</th>
                <th scope="col">{t('fddMapping.equipment')}</th>
                <th scope="col">{t('fddMapping.equipmentType')}</th>
                <th scope="col">{t('fddMapping.brickClass')}</th>
                <th scope="col">{t('fddMapping.unit')}</th>
                <th scope="col">{t('fddMapping.state')}</th>
              </tr>
            </thead>
            <tbody>
              {suggestions.map((s) => (
                <MappingRow
                  key={s.code}
                  s={s}
                  row={rowOf(s.code)}
                  selected={selected.has(s.code)}
                  problem={rowProblems[s.code]}
                  onToggle={(on) => toggle(s.code, on)}
                  onEdit={(change) => edit(s.code, change)}
                />
              ))}
            </tbody>
          </table>
        </div>
      </form>
    </section>
  );
}

/** A model coming in as CSV or Brick Turtle (all or nothing). */
function ImportForm({ onSubmit, setFile }: { onSubmit: (event: Event) => void; setFile: (file: File | null) => void }) {
  return (
    <form class="card stack" onSubmit={onSubmit} noValidate aria-labelledby="fdd-import-heading">
      <h2 id="fdd-import-heading">{t('fddMapping.importTitle')}</h2>
      <p class="muted">{t('fddMapping.importIntro')}</p>
      <Field label={t('fddMapping.file')}>
        {(id) => <input id={id} type="file" accept=".csv,.ttl,text/csv,text/turtle" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />}
      </Field>
      <button type="submit">{t('fddMapping.import')}</button>
    </form>
  );
}

/** One gateway code: selected or not, its equipment, type, class and unit as edited, and its state or refusal. */
function MappingRow(props: {
  s: Suggestion;
  row: Row;
  selected: boolean;
  problem: string | undefined;
  onToggle: (on: boolean) => void;
  onEdit: (change: Partial<Row>) => void;
}) {
  const { s, row, selected, problem, onToggle, onEdit } = props;
  const label = (what: string) => `${what} ${s.code}`;
  return (
    <tr data-code={s.code}>
      <td>
        <input type="checkbox" aria-label={label(t('fddMapping.select'))} checked={selected} onChange={(e) => onToggle(e.currentTarget.checked)} />
      </td>
      <td>
        {s.code}
        {s.name && (
          <>
            <br />
            <span class="muted">{s.name}</span>
          </>
        )}
      </td>
      <td>
        <input aria-label={label(t('fddMapping.equipment'))} value={row.equipment} onInput={(e) => onEdit({ equipment: e.currentTarget.value })} />
      </td>
      <td>
        <select
          aria-label={label(t('fddMapping.equipmentType'))}
          value={row.equipmentType}
          onChange={(e) => onEdit({ equipmentType: e.currentTarget.value as EquipmentType })}
        >
          {TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </td>
      <td>
        <input
          aria-label={label(t('fddMapping.brickClass'))}
          list="fdd-classes"
          value={row.brickClass}
          onInput={(e) => onEdit({ brickClass: e.currentTarget.value })}
        />
      </td>
      <td>
        <input aria-label={label(t('fddMapping.unit'))} size={5} value={row.unit} onInput={(e) => onEdit({ unit: e.currentTarget.value })} />
      </td>
      <td>
        {problem ? (
          <span class="error" role="alert">
            {problem}
          </span>
        ) : s.mapped ? (
          t('fddMapping.mapped')
        ) : s.brickClass ? (
          t('fddMapping.suggested')
        ) : (
          t('fddMapping.noGuess')
        )}
      </td>
    </tr>
  );
}

/** The model as CSV or Brick Turtle, downloaded; a refusal said in the screen's problem. */
function ExportButtons({ setProblem }: { setProblem: (problem: string | null) => void }) {
  return (
    <div class="actions">
      <button type="button" onClick={async () => setProblem(await download('/api/fdd/points/export.csv', 'point-model.csv'))}>
        {t('fddMapping.exportCsv')}
      </button>{' '}
      <button type="button" onClick={async () => setProblem(await download('/api/fdd/model.ttl', 'point-model.ttl'))}>
        {t('fddMapping.exportTurtle')}
      </button>
    </div>
  );
}
