// The work list the faults and maintenance screens share: a status filter ("any status" first), the add button that
// opens the screen's form (open at once while a draft is kept), the done and problem lines, and the table with a status
// select per row for operators (plain text for viewers) and an operator-only actions column where the screen has one.
// The screen keeps its heading, its query (the filter feeds it), its form and what a status move or an action sends.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { t } from '../i18n';
import { can } from '../state/session';
import { Done, Field, Problem } from './Field';
import { hasDraft } from './useDraft';

/** A column of the table: its header and cell; `operator` columns are shown to operators only. */
export type WorkColumn<R> = { header: string; cell: (row: R) => ComponentChildren; class?: string; operator?: boolean };

export function WorkList<S extends string, R extends { id: number; status: S }>(props: {
  /** Names the rows' data attribute (`data-<kind>-id`). */
  kind: string;
  statuses: readonly S[];
  statusLabel: (status: S) => string;
  status: '' | S;
  onStatus: (status: '' | S) => void;
  addLabel: string;
  /** The form's draft key: a kept draft opens the form with it. */
  draft: string;
  /** The form; `close` closes it (after a save). */
  form: (close: () => void) => ComponentChildren;
  done: string | null;
  problem: string | null;
  items: R[] | undefined;
  none: string;
  /** The row's header cell, then the columns; the status column comes after the first `columnsBefore` of them. */
  head: WorkColumn<R>;
  columns: WorkColumn<R>[];
  columnsBefore: number;
  /** What the status select's label names (`Status of …`). */
  nameOf: (row: R) => string;
  onMove: (id: number, next: S) => void;
}) {
  // A kept draft (the session ended while it was typed, a reload, an outage) opens the form with it.
  const [adding, setAdding] = useState(() => hasDraft(props.draft));
  const operator = can('operator');
  const columns = props.columns.filter((column) => operator || !column.operator);
  const before = columns.slice(0, props.columnsBefore);
  const after = columns.slice(props.columnsBefore);
  // A function, not one array: a vnode rendered in two places at once confuses preact's diff.
  const options = () =>
    props.statuses.map((s) => (
      <option key={s} value={s}>
        {props.statusLabel(s)}
      </option>
    ));

  return (
    <>
      <div class="filters">
        <Field label={t('maintenance.status')}>
          {(id) => (
            <select id={id} value={props.status} onChange={(e) => props.onStatus(e.currentTarget.value as '' | S)}>
              <option value="">{t('maintenance.anyStatus')}</option>
              {options()}
            </select>
          )}
        </Field>
        {operator && (
          <button type="button" class="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            {props.addLabel}
          </button>
        )}
      </div>
      {adding && props.form(() => setAdding(false))}
      <Done text={props.done} />
      <Problem text={props.problem} />
      {props.items && props.items.length === 0 && <p class="muted">{props.none}</p>}
      {props.items && props.items.length > 0 && (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                {[props.head, ...before].map((column) => (
                  <th key={column.header} scope="col">
                    {column.header}
                  </th>
                ))}
                <th scope="col">{t('maintenance.status')}</th>
                {after.map((column) => (
                  <th key={column.header} scope="col">
                    {column.header}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.items.map((row) => (
                <tr key={row.id} {...{ [`data-${props.kind}-id`]: row.id }}>
                  <th scope="row" class={props.head.class}>
                    {props.head.cell(row)}
                  </th>
                  {before.map((column) => (
                    <td key={column.header} class={column.class}>
                      {column.cell(row)}
                    </td>
                  ))}
                  <td>
                    {operator ? (
                      <select
                        aria-label={t('maintenance.statusOf', { equipment: props.nameOf(row) })}
                        value={row.status}
                        onChange={(e) => props.onMove(row.id, e.currentTarget.value as S)}
                      >
                        {options()}
                      </select>
                    ) : (
                      props.statusLabel(row.status)
                    )}
                  </td>
                  {after.map((column) => (
                    <td key={column.header} class={column.class}>
                      {column.cell(row)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
