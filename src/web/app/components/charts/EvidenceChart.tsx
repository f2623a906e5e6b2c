// A fault's evidence (issue 54) on uPlot, its own chunk loaded when a fault is opened: the rule's points on one time
// axis (temperatures on the left scale, the other unit on the right), the fault's span shaded, and the same figures as
// a table for screen readers.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { paths } from '../../api/schema';
import { dateTime, locale, num, siteTimeZone, t } from '../../i18n';
import './charts.css';

export type Evidence = paths['/api/fdd/episodes/{id}/evidence']['get']['responses'][200]['content']['application/json'];
const PALETTE = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#0891b2'];

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** The series on one x axis (every time any of them has), null where one has no sample. */
export function aligned(evidence: Evidence): { xs: number[]; ys: (number | null)[][] } {
  const xs = [...new Set(evidence.series.flatMap((s) => s.at.map((at) => Date.parse(at) / 1000)))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = evidence.series.map((s) => {
    const row: (number | null)[] = xs.map(() => null);
    s.at.forEach((at, i) => {
      row[index.get(Date.parse(at) / 1000)!] = s.value[i]!;
    });
    return row;
  });
  return { xs, ys };
}

export function EvidenceChart({ evidence, title }: { evidence: Evidence; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  const { xs, ys } = aligned(evidence);
  const units = [...new Set(evidence.series.map((s) => s.unit))];
  const scaleOf = (unit: string) => (unit === units[0] ? 'left' : 'right');

  useEffect(() => {
    const element = box.current;
    if (!element || xs.length === 0) return;
    const ink = cssVar('--ink', '#222');
    const grid = cssVar('--line', '#ddd');
    const shade = cssVar('--warn-bg', 'rgba(220, 38, 38, 0.12)');
    const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    const spanFrom = Date.parse(evidence.span.from) / 1000;
    const spanTo = Date.parse(evidence.span.to) / 1000;
    const height = () => Math.max(220, Math.min(380, Math.round(element.clientWidth * 0.4)));
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: height(),
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), siteTimeZone),
        scales: { x: { time: true }, left: {}, right: {} },
        series: [
          { label: t('fddEquipment.time'), value: (_u, v) => (v == null ? '–' : dateTime(v * 1000)) },
          ...evidence.series.map((s, k) => ({
            label: `${s.name} (${s.unit || '–'})`,
            scale: scaleOf(s.unit),
            stroke: PALETTE[k % PALETTE.length],
            width: 2,
            spanGaps: false,
            value: (_u: uPlot, v: number | null) => (v == null ? '–' : num(v, 2)),
          })),
        ],
        axes: [
          { ...axis },
          { ...axis, scale: 'left', label: units[0] || '' },
          ...(units.length > 1 ? [{ ...axis, scale: 'right', side: 1, label: units.slice(1).join(', '), grid: { show: false } }] : []),
        ],
        hooks: {
          // The fault's span, shaded under the lines.
          drawClear: [
            (u: uPlot) => {
              const left = u.valToPos(Math.max(spanFrom, u.scales.x.min ?? spanFrom), 'x', true);
              const right = u.valToPos(Math.min(spanTo, u.scales.x.max ?? spanTo), 'x', true);
              if (!(right > left)) return;
              u.ctx.save();
              u.ctx.fillStyle = shade;
              u.ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
              u.ctx.restore();
            },
          ],
        },
        cursor: { drag: { x: true, y: false } },
      },
      [xs, ...ys] as uPlot.AlignedData,
      element,
    );
    const resize = () => plot.setSize({ width: element.clientWidth, height: height() });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [evidence, locale.value]);

  return (
    <div class="stack" data-evidence={evidence.episodeId}>
      <div
        class="chart"
        ref={box}
        role="img"
        aria-label={t('fddEquipment.chartLabel', { title, from: dateTime(evidence.span.from), to: dateTime(evidence.span.to) })}
      />
      <p class="muted">{t('fddEquipment.shaded')}</p>
      <details>
        <summary>{t('fddEquipment.table')}</summary>
        <div class="table-wrap">
          <table data-table="fdd-evidence">
            <caption>{title}</caption>
            <thead>
              <tr>
                <th scope="col">{t('fddEquipment.time')}</th>
                {evidence.series.map((s) => (
                  <th scope="col" key={s.name}>
                    {s.name} ({s.unit || '–'})
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {xs.map((x, i) => (
                <tr key={x}>
                  <td>{dateTime(x * 1000)}</td>
                  {ys.map((row, k) => (
                    <td class="num" key={evidence.series[k]!.name}>
                      {row[i] == null ? '–' : num(row[i]!, 2)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
