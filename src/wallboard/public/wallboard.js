// The wallboard: polls the public dashboard payload, renders it, and keeps the last good figures (marked stale) when
// the service or the gateway cannot be reached. Plain module, no build step; uPlot draws the weekly chart.
const params = new URLSearchParams(location.search);
const areaFilter = params.get('area');
if (params.get('theme') === 'light') document.documentElement.classList.replace('theme-dark', 'theme-light');

const $ = (field) => document.querySelector(`[data-field="${field}"]`);
const MIN_INTERVAL_SEC = 5;
let chart;
let lastPayload;
let lastOkAt;
let staleSince;

function numberFormat(locale, digits) {
  try {
    return new Intl.NumberFormat(locale, { minimumFractionDigits: digits, maximumFractionDigits: digits });
  } catch {
    return new Intl.NumberFormat('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
}

function money(locale, currency, value) {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(value);
  } catch {
    return `${numberFormat(locale, 2).format(value)} ${currency}`;
  }
}

/** Sets a figure's text and keeps the raw number beside it (data-value), so what is shown can be checked. */
function setFigure(field, value, text) {
  const element = $(field);
  if (!element) return;
  if (value === undefined || value === null) {
    element.textContent = '';
    element.removeAttribute('data-value');
    return;
  }
  element.dataset.value = String(value);
  element.textContent = text;
}

function timeOf(locale, timezone, iso) {
  try {
    return new Intl.DateTimeFormat(locale, { timeZone: timezone, hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(iso));
  } catch {
    return new Date(iso).toLocaleTimeString();
  }
}

function renderAreas(payload, kwh, kw) {
  const container = document.querySelector('.areas');
  const areas = payload.areas.filter((area) => !areaFilter || area.name === areaFilter);
  container.replaceChildren(
    ...areas.map((area) => {
      const card = document.createElement('article');
      card.className = 'area';
      card.dataset.area = area.name;
      const title = document.createElement('h3');
      title.textContent = area.name;
      if (area.source) {
        const source = document.createElement('span');
        source.className = 'source';
        source.textContent = area.source === 'meters' ? 'metered' : 'manual';
        title.append(source);
      }
      const now = document.createElement('span');
      now.className = 'now';
      now.dataset.value = String(area.powerKw);
      now.textContent = `${kw.format(area.powerKw)} kW`;
      const figures = document.createElement('span');
      figures.className = 'figures';
      figures.dataset.today = String(area.todayKwh);
      figures.dataset.month = String(area.monthKwh);
      figures.textContent = `today ${kwh.format(area.todayKwh)} kWh · month ${kwh.format(area.monthKwh)} kWh`;
      card.append(title, now, figures);
      return card;
    }),
  );
}

function renderChart(payload) {
  const host = document.querySelector('.chart');
  const days = payload.weeklyEnergy.days;
  const xs = days.map((_, i) => i);
  const ys = days.map((day) => day.kwh);
  host.dataset.values = JSON.stringify(ys);
  if (typeof window.uPlot !== 'function') return;
  const styles = getComputedStyle(document.documentElement);
  const width = Math.max(280, host.clientWidth);
  // The panel decides the height (it fills the row on a wall screen); the chart's own height never feeds back into it.
  const height = Math.max(240, host.clientHeight - 8);
  const labels = days.map((day) => new Date(`${day.day}T12:00:00Z`).toLocaleDateString(payload.platform.locale, { weekday: 'short', day: 'numeric', timeZone: 'UTC' }));
  const axis = { stroke: styles.getPropertyValue('--muted').trim(), grid: { stroke: 'rgba(128,128,128,0.2)' }, ticks: { show: false }, font: '16px system-ui' };
  const options = {
    width,
    height,
    legend: { show: false },
    cursor: { show: false },
    scales: { x: { time: false, range: [-0.6, days.length - 0.4] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [
      { ...axis, values: (_u, splits) => splits.map((i) => labels[i] ?? ''), splits: () => xs },
      { ...axis, size: 70 },
    ],
    series: [{}, { fill: styles.getPropertyValue('--bar').trim(), stroke: styles.getPropertyValue('--bar').trim(), paths: window.uPlot.paths.bars({ size: [0.6, 120] }), points: { show: false } }],
  };
  if (chart) {
    chart.setSize({ width, height });
    chart.setData([xs, ys]);
  } else {
    chart = new window.uPlot(options, [xs, ys], host);
  }
}

function render(payload) {
  const { platform, overview } = payload;
  const locale = platform.locale;
  const kw = numberFormat(locale, 1);
  const kwh = numberFormat(locale, 1);
  const kg = numberFormat(locale, 1);
  document.title = `${platform.siteName} · EMS wallboard`;
  setFigure('siteName', platform.siteName, platform.siteName);
  $('scope').textContent = areaFilter ? `· ${areaFilter}` : '';
  const logo = document.querySelector('.logo');
  if (platform.logoUrl) {
    if (logo.getAttribute('src') !== platform.logoUrl) logo.src = platform.logoUrl;
    logo.hidden = false;
  } else logo.hidden = true;

  const area = areaFilter ? payload.areas.find((candidate) => candidate.name === areaFilter) : undefined;
  if (areaFilter) {
    // One area: its own figures; cost and carbon are only known for the site as a whole.
    setFigure('powerKw', area?.powerKw ?? 0, kw.format(area?.powerKw ?? 0));
    setFigure('todayKwh', area?.todayKwh ?? 0, kwh.format(area?.todayKwh ?? 0));
    setFigure('monthKwh', area?.monthKwh ?? 0, kwh.format(area?.monthKwh ?? 0));
    for (const field of ['todayCost', 'todayCarbon', 'monthCost', 'monthCarbon']) setFigure(field, null);
  } else {
    setFigure('powerKw', overview.powerKw, kw.format(overview.powerKw));
    setFigure('todayKwh', overview.energyTodayKwh, kwh.format(overview.energyTodayKwh));
    setFigure('monthKwh', overview.energyMonthKwh, kwh.format(overview.energyMonthKwh));
    setFigure('todayCost', overview.costToday, money(locale, overview.currency, overview.costToday));
    setFigure('todayCarbon', overview.carbonTodayKg, `${kg.format(overview.carbonTodayKg)} kg CO₂`);
    setFigure('monthCost', overview.costMonth, money(locale, overview.currency, overview.costMonth ?? 0));
    setFigure('monthCarbon', overview.carbonMonthKg, `${kg.format(overview.carbonMonthKg ?? 0)} kg CO₂`);
  }
  setFigure('activeAlerts', overview.activeAlerts, String(overview.activeAlerts));
  setFigure('openFaults', overview.openFaults, `${overview.openFaults} open fault${overview.openFaults === 1 ? '' : 's'}`);
  for (const level of ['critical', 'warning', 'info']) {
    const count = payload.alertCounts?.[level] ?? 0;
    setFigure(`alerts.${level}`, count, `${count} ${level}`);
  }
  const gateway = payload.gateway ?? { state: 'unknown' };
  const pill = $('gateway');
  pill.dataset.state = gateway.state;
  pill.textContent = gateway.state === 'up' ? 'Gateway online' : gateway.state === 'down' ? 'Gateway offline' : 'Gateway unknown';
  $('updated').textContent = `Updated ${timeOf(locale, platform.timezone, payload.generatedAt)}`;
  $('updated').dateTime = payload.generatedAt;
  renderAreas(payload, kwh, kw);
  renderChart(payload);
}

function showStale(reason) {
  const banner = document.querySelector('.stale');
  if (!reason) {
    staleSince = undefined;
    banner.hidden = true;
    document.body.classList.remove('is-stale');
    return;
  }
  staleSince ??= lastOkAt ?? new Date();
  const locale = lastPayload?.platform.locale ?? 'en';
  const timezone = lastPayload?.platform.timezone ?? 'UTC';
  $('staleText').textContent = `since ${timeOf(locale, timezone, staleSince.toISOString())} — ${reason}; showing the last figures received.`;
  banner.hidden = false;
  document.body.classList.add('is-stale');
}

async function refresh() {
  let interval = lastPayload?.platform.refreshIntervalSec ?? 30;
  try {
    const response = await fetch('/api/dashboard', { cache: 'no-store', headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`the service answered ${response.status}`);
    const payload = await response.json();
    lastPayload = payload;
    interval = payload.platform.refreshIntervalSec;
    render(payload);
    lastOkAt = new Date();
    showStale(payload.gateway?.state === 'down' ? 'the IoT gateway cannot be reached' : undefined);
  } catch {
    const pill = $('gateway');
    pill.dataset.state = 'unknown';
    pill.textContent = 'Gateway unknown';
    showStale('the EMS service cannot be reached');
  } finally {
    setTimeout(refresh, Math.max(MIN_INTERVAL_SEC, interval) * 1000);
  }
}

window.addEventListener('resize', () => lastPayload && renderChart(lastPayload));
refresh();
