// The wallboard: polls GET /api/wallboard (the site, or ?area=), renders it, fits every figure to its box, and keeps
// the last good figures under a banner when the data is not live: the service says so (dataState), or it cannot be
// reached at all. Plain module, no build step, no chart library: seven bars are seven boxes.
const params = new URLSearchParams(location.search);
if (params.get('theme') === 'light') document.documentElement.classList.replace('theme-dark', 'theme-light');

/**
 * The page's words come with each payload (src/platform/i18n, the site's language). These few are for before the first one
 * arrives, or when the service cannot be reached at all.
 */
const ENGLISH = {
  waiting: 'waiting for data…',
  staleTitle: 'Stale',
  staleText: 'since {time} — {reason}; showing the last figures received.',
  'reason.service': 'the EMS service cannot be reached',
  'gateway.unknown': 'Gateway unknown',
};
let labels = ENGLISH;
let plurals = new Intl.PluralRules('en');

/** A label with its {placeholders} filled; with `n`, the `.one`/`.few`… form when the language has it. */
function t(key, values = {}) {
  let text = labels[key] ?? ENGLISH[key] ?? key;
  if (typeof values.n === 'number') text = labels[`${key}.${plurals.select(values.n)}`] ?? text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

function useLabels(payload) {
  labels = payload.labels;
  try {
    plurals = new Intl.PluralRules(payload.platform.locale);
  } catch {
    plurals = new Intl.PluralRules('en');
  }
  const grid = payload.utilities?.today.solar != null;
  for (const element of document.querySelectorAll('[data-label]')) element.textContent = t((grid && element.dataset.gridLabel) || element.dataset.label);
}

const $ = (field) => document.querySelector(`[data-field="${field}"]`);
/** Never poll faster than this, however short the collection interval. */
const MIN_POLL_SEC = 2;
/** Rows an areas or alerts panel shows when the page scrolls (phone, portrait). */
const PAGE_ROWS = 8;
const requestedArea = params.get('area') || null;
const rotateSec = Math.max(3, Number(params.get('rotate')) || 20);
const rotating = params.has('rotate') && !requestedArea;

let view = requestedArea; // the area on screen, null for the site
let lastPayload; // the last payload of the view on screen
let clientStaleSince;
let receivedAt = 0;
const rotation = { index: 0, views: [null] };
let pollTimer;

$('updated').textContent = t('waiting');

function numberFormat(locale, digits, extra = {}) {
  const options = { minimumFractionDigits: digits, maximumFractionDigits: digits, ...extra };
  try {
    return new Intl.NumberFormat(locale, options);
  } catch {
    return new Intl.NumberFormat('en', options);
  }
}

/** Energy and power: one decimal below 1000, whole numbers from there (a six-digit month needs no tenths). */
function figure(locale, value) {
  return numberFormat(locale, Math.abs(value) >= 1000 ? 0 : 1).format(value);
}

function money(locale, currency, value) {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency, maximumFractionDigits: Math.abs(value) >= 1000 ? 0 : 2 }).format(value);
  } catch {
    return `${numberFormat(locale, 2).format(value)} ${currency}`;
  }
}

function timeOf(locale, timezone, date) {
  try {
    return new Intl.DateTimeFormat(locale, { timeZone: timezone, hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(date);
  } catch {
    return date.toLocaleTimeString();
  }
}

/** "Nov 23, 10:30 PM": a day and a time of the site's zone. */
function dateTimeOf(locale, timezone, date) {
  try {
    return new Intl.DateTimeFormat(locale, { timeZone: timezone, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(date);
  } catch {
    return date.toLocaleString();
  }
}

/** "3 days 2 hr", "3 Tg. 2 Std.", "3 j 2 h": units as the site's locale abbreviates them (Intl unit format). */
function durationText(locale, ms) {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  const unit = (name, n) => {
    try {
      return new Intl.NumberFormat(locale, { style: 'unit', unit: name, unitDisplay: 'short' }).format(n);
    } catch {
      return new Intl.NumberFormat('en', { style: 'unit', unit: name, unitDisplay: 'short' }).format(n);
    }
  };
  if (days) return `${unit('day', days)} ${unit('hour', hours)}`;
  if (hours) return `${unit('hour', hours)} ${unit('minute', rest)}`;
  return rest ? unit('minute', rest) : `< ${unit('minute', 1)}`;
}

/** Sets a figure's text and keeps the raw number beside it (data-value), so what is shown can be checked. */
function setFigure(field, value, text) {
  const element = $(field);
  if (value === undefined || value === null) {
    element.textContent = '';
    element.removeAttribute('data-value');
    return;
  }
  element.dataset.value = String(value);
  element.textContent = text;
}

function make(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Shrinks an element's font until its content fits its width (never grows it past the stylesheet's size). */
function shrinkToFit(element) {
  element.style.fontSize = '';
  for (let i = 0; i < 4 && element.scrollWidth > element.clientWidth + 0.5 && element.clientWidth > 0; i += 1) {
    const size = parseFloat(getComputedStyle(element).fontSize);
    element.style.fontSize = `${Math.floor(size * (element.clientWidth / element.scrollWidth) * 0.98 * 10) / 10}px`;
  }
}

/**
 * Shows as many of `total` rows as the panel holds: `render(count)` draws `count` rows (the last may sum the rest).
 * A panel that scrolls with the page (portrait, phone) gets at most PAGE_ROWS.
 */
function fitRows(container, total, render) {
  const panel = container.parentElement;
  if (getComputedStyle(panel).overflow !== 'hidden') return render(Math.min(total, PAGE_ROWS));
  render(total);
  const bottom = panel.getBoundingClientRect().bottom - parseFloat(getComputedStyle(panel).paddingBottom);
  const rows = [...container.children];
  let count = rows.filter((row) => row.getBoundingClientRect().bottom <= bottom + 0.5).length;
  if (count >= rows.length) return;
  // Room for the row that sums the rest, then check (rows may wrap to two lines).
  render(count);
  while (count > 1 && panel.scrollHeight > panel.clientHeight + 0.5) render((count -= 1));
}

function renderAreas(payload) {
  const container = document.querySelector('.areas');
  const { areas, platform } = payload;
  const locale = platform.locale;
  const row = (className, name, power, today) => {
    const card = make('div', className);
    card.append(make('h3', '', name), make('span', 'now', power), make('span', 'today', today));
    return card;
  };
  const draw = (count) => {
    // `count` rows in all: the largest areas, and the last row sums the rest when any is left out.
    const shown = count >= areas.length ? areas : areas.slice(0, Math.max(1, count - 1));
    const rest = areas.slice(shown.length);
    const rows = [row('area head', t('areaHead'), `${t('nowHead')} kW`, `${t('todayHead')} kWh`)];
    for (const area of shown) {
      const card = row('area', area.name, figure(locale, area.powerKw), figure(locale, area.todayKwh));
      card.dataset.area = area.name;
      card.dataset.power = String(area.powerKw);
      card.dataset.today = String(area.todayKwh);
      rows.push(card);
    }
    if (rest.length) {
      const power = rest.reduce((sum, area) => sum + area.powerKw, 0);
      const today = rest.reduce((sum, area) => sum + area.todayKwh, 0);
      const card = row('area rest', t('restAreas', { n: rest.length }), figure(locale, power), figure(locale, today));
      card.dataset.restCount = String(rest.length);
      card.dataset.power = String(power);
      card.dataset.today = String(today);
      rows.push(card);
    }
    container.replaceChildren(...rows);
  };
  // The header row is drawn too: `count` counts area rows only.
  fitRows(container, areas.length + 1, (count) => draw(count - 1));
}

function renderAlerts(payload) {
  const list = document.querySelector('.alerts');
  const { active, more } = payload.alerts;
  const serverNow = Date.parse(payload.generatedAt) + (Date.now() - receivedAt);
  const draw = (count) => {
    if (!active.length) return list.replaceChildren(make('li', 'none', t('noActiveAlerts')));
    const shown = active.slice(0, count);
    const items = shown.map((alert) => {
      const item = make('li', 'alert');
      item.dataset.level = alert.level;
      item.dataset.since = alert.since;
      item.append(make('span', 'badge', t(`badge.${alert.level}`)), make('span', 'title', alert.title));
      // A gateway alarm that ended at the source stays active until acknowledged: say that, not "for 2 days".
      const since = alert.clearedAt
        ? t('clearedWaiting', { time: dateTimeOf(payload.platform.locale, payload.platform.timezone, new Date(alert.clearedAt)) })
        : t('activeFor', { duration: durationText(payload.platform.locale, serverNow - Date.parse(alert.since)) });
      if (alert.clearedAt) item.dataset.cleared = alert.clearedAt;
      item.append(make('span', 'meta', alert.area ? `${alert.area} · ${since}` : since));
      return item;
    });
    const hidden = active.length - shown.length + more;
    if (hidden > 0) {
      const rest = make('li', 'more', t('moreAlerts', { n: hidden }));
      rest.dataset.more = String(hidden);
      items.push(rest);
    }
    list.replaceChildren(...items);
  };
  fitRows(list, active.length, (count) => draw(Math.max(1, count)));
}

function renderChart(payload) {
  const host = document.querySelector('.chart');
  const { days } = payload.weeklyEnergy;
  const locale = payload.platform.locale;
  host.dataset.values = JSON.stringify(days.map((day) => day.kwh));
  // A day with no data (null) is drawn as no bar with "No data", never as 0.
  const max = Math.max(1, ...days.filter((day) => day.kwh !== null).map((day) => day.kwh));
  const formats = [{ weekday: 'short', day: 'numeric' }, { weekday: 'short' }, { weekday: 'narrow' }];
  const label = (day, format) => {
    try {
      return new Date(`${day}T12:00:00Z`).toLocaleDateString(locale, { ...format, timeZone: 'UTC' });
    } catch {
      return day.slice(5);
    }
  };
  const bars = make('div', 'bars');
  host.setAttribute(
    'aria-label',
    `${t('lastSevenDays')}: ${days.map((day) => (day.kwh === null ? `${day.day} ${t('noData')}` : `${day.day} ${day.kwh} kWh`)).join(', ')}`,
  );
  const columns = days.map((day, i) => {
    const column = make('div', i === days.length - 1 ? 'bar-col today' : 'bar-col');
    column.dataset.day = day.day;
    column.dataset.value = day.kwh === null ? '' : String(day.kwh);
    const track = make('div', 'bar-track');
    const bar = make('div', 'bar');
    // The tallest bar leaves room above it for its figure.
    const share = day.kwh === null ? 0 : (day.kwh / max) * 82;
    bar.style.height = `${share}%`;
    const value = day.kwh === null ? make('span', 'bar-value missing', t('noData')) : make('span', 'bar-value', figure(locale, day.kwh));
    value.style.bottom = `calc(${share}% + 0.15rem)`;
    track.append(bar, value);
    column.append(track, make('span', 'bar-label', label(day.day, formats[0])));
    return column;
  });
  bars.append(...columns);
  host.replaceChildren(bars);
  // Narrow screens: the shorter day names first, then compact figures, then smaller type — never overlapping text.
  const labels = [...host.querySelectorAll('.bar-label')];
  for (const format of formats) {
    labels.forEach((element, i) => (element.textContent = label(days[i].day, format)));
    if (labels.every((element) => element.scrollWidth <= element.clientWidth)) break;
  }
  labels.forEach(shrinkToFit);
  const values = [...host.querySelectorAll('.bar-value')];
  if (values.some((element) => element.scrollWidth > element.clientWidth)) {
    const compact = numberFormat(locale, 0, { notation: 'compact', maximumFractionDigits: 1, minimumFractionDigits: 0 });
    values.forEach((element, i) => {
      if (days[i].kwh !== null) element.textContent = compact.format(days[i].kwh);
    });
  }
  values.forEach(shrinkToFit);
}

function fitFigures() {
  for (const element of document.querySelectorAll('.big')) shrinkToFit(element);
}

/** Percent of a 0..1 share, as the site's locale writes it. */
function percent(locale, share) {
  return numberFormat(locale, 0, { style: 'percent' }).format(share);
}

/**
 * A tile per metered utility in its own unit, today big and the month below, and the solar balance. A figure the
 * meters did not record is null in the payload and shown as missing ("–", "No data"), never as 0.
 */
function renderUtilities(payload) {
  const host = document.querySelector('.utilities');
  const utilities = payload.utilities;
  document.body.classList.toggle('has-utilities', utilities !== null);
  host.hidden = utilities === null;
  if (!utilities) return host.replaceChildren();
  const locale = payload.platform.locale;
  const month = new Map(utilities.month.commodities.map((entry) => [entry.commodity, entry]));
  const unitOf = (entry) => (entry.commodity === 'heat' ? 'kWh th' : entry.unit);
  const amount = (value, unit) => `${figure(locale, value)} ${unit}`;
  const part = (name, value, text) => {
    const element = make('span', 'part', value === null ? `${text.label}: ${t('noData')}` : text.shown);
    element.dataset.part = name;
    if (value === null) element.dataset.missing = 'true';
    else element.dataset.value = String(value);
    return element;
  };
  const tile = (name, title, value, unit, parts) => {
    const article = make('article', 'utility');
    article.dataset.commodity = name;
    const big = make('p', 'big');
    if (value === null) {
      const num = make('span', 'num', t('noData'));
      num.dataset.missing = 'true';
      big.append(num);
    } else {
      const num = make('span', 'num', figure(locale, value));
      num.dataset.value = String(value);
      big.append(num, make('small', '', unit));
    }
    const sub = make('p', 'sub');
    sub.append(...parts);
    const heading = make('h2', '', title);
    heading.append(make('span', 'when', t('utilityToday')));
    article.append(heading, big, sub);
    return article;
  };
  const tiles = utilities.today.commodities.map((entry) => {
    const unit = unitOf(entry);
    const parts = [];
    if (entry.commodity === 'gas') parts.push(part('kwh', entry.kwh, { label: 'kWh', shown: entry.kwh === null ? '' : amount(entry.kwh, 'kWh') }));
    const inMonth = month.get(entry.commodity)?.quantity ?? null;
    parts.push(
      part('month', inMonth, {
        label: t('utilityMonth', { value: '' }).trim(),
        shown: inMonth === null ? '' : t('utilityMonth', { value: amount(inMonth, unit) }),
      }),
    );
    return tile(entry.commodity, t(`utility.${entry.commodity}`), entry.quantity, unit, parts);
  });
  const solar = utilities.today.solar;
  if (solar) {
    const share = (name, value, label) => part(name, value, { label, shown: value === null ? '' : `${label} ${percent(locale, value)}` });
    const kwh = (name, value, label) => part(name, value, { label, shown: value === null ? '' : `${label} ${amount(value, 'kWh')}` });
    const inMonth = utilities.month.solar?.generationKwh ?? null;
    const card = tile('solar', t('solarYield'), solar.generationKwh, 'kWh', [
      kwh('export', solar.exportKwh, t('solarExport')),
      share('selfConsumptionRate', solar.selfConsumptionRate, t('solarSelfConsumption')),
      share('selfSufficiency', solar.selfSufficiency, t('solarSelfSufficiency')),
      part('month', inMonth, {
        label: t('utilityMonth', { value: '' }).trim(),
        shown: inMonth === null ? '' : t('utilityMonth', { value: amount(inMonth, 'kWh') }),
      }),
    ]);
    card.classList.add('solar');
    tiles.push(card);
  }
  host.replaceChildren(...tiles);
}

function render(payload) {
  const { platform, figures, scope } = payload;
  const locale = platform.locale;
  useLabels(payload);
  document.documentElement.lang = locale;
  document.title = `${platform.siteName}${scope.area ? ` · ${scope.area}` : ''} · EMS wallboard`;
  document.body.classList.remove('unknown-area');
  document.querySelector('.notice').hidden = true;
  document.body.classList.toggle('area-view', scope.area !== null);
  document.body.classList.toggle('no-areas', payload.areas.length === 0);
  setFigure('siteName', platform.siteName, platform.siteName);
  $('scope').textContent = scope.area ?? '';
  const logo = document.querySelector('.logo');
  if (platform.logoUrl) {
    if (logo.getAttribute('src') !== platform.logoUrl) logo.src = platform.logoUrl;
    logo.hidden = false;
  } else logo.hidden = true;

  setFigure('powerKw', figures.powerKw, figure(locale, figures.powerKw));
  setFigure('todayKwh', figures.todayKwh, figure(locale, figures.todayKwh));
  setFigure('monthKwh', figures.monthKwh, figure(locale, figures.monthKwh));
  const kg = (value) => t('carbonKg', { kg: figure(locale, value) });
  setFigure('todayCost', figures.costToday, figures.costToday === null ? '' : money(locale, platform.currency, figures.costToday));
  setFigure('monthCost', figures.costMonth, figures.costMonth === null ? '' : money(locale, platform.currency, figures.costMonth));
  setFigure('todayCarbon', figures.carbonTodayKg, figures.carbonTodayKg === null ? '' : kg(figures.carbonTodayKg));
  setFigure('monthCarbon', figures.carbonMonthKg, figures.carbonMonthKg === null ? '' : kg(figures.carbonMonthKg));
  // Beside the headline figures: the share of the period's intervals they rest on, when it is not all of them (issue 41).
  const coverage = (share) => (share === null || share === undefined || share >= 1 ? '' : t('coverage', { percent: Math.round(share * 100) }));
  setFigure('todayCoverage', figures.coverageToday ?? null, coverage(figures.coverageToday));
  setFigure('monthCoverage', figures.coverageMonth ?? null, coverage(figures.coverageMonth));
  // The tiles above are grid electricity: beside them this month's cost and carbon over every utility, by scope (issue 41).
  // Shown only when every utility with data is priced: a sum leaving one out would read as the whole.
  const headline = payload.utilities?.month.allUtilities ?? null;
  const all = headline && headline.unpriced.length === 0 ? headline : null;
  const allKg = (value) => (value === null ? '–' : kg(value));
  setFigure(
    'monthAllUtilities',
    all && all.costTotal !== null && all.carbonKg !== null ? all.costTotal : null,
    all && all.costTotal !== null && all.carbonKg !== null
      ? t('allUtilities', {
          cost: money(locale, platform.currency, all.costTotal),
          kg: kg(all.carbonKg),
          scope1: allKg(all.scope1Kg),
          scope2: allKg(all.scope2Kg),
        })
      : '',
  );
  setFigure('openFaults', payload.openFaults, t('openFaults', { n: payload.openFaults }));
  setFigure('equipmentFaults', payload.equipmentFaults, t('equipmentFaults', { n: payload.equipmentFaults }));
  for (const level of ['critical', 'warning']) {
    const count = payload.alerts.counts[level];
    setFigure(`alerts.${level}`, count, t(level, { n: count }));
  }
  const pill = $('gateway');
  pill.dataset.state = payload.gateway.state;
  pill.textContent = t(`gateway.${payload.gateway.state}`);
  $('updated').textContent = t('updated', { time: timeOf(locale, platform.timezone, new Date(payload.generatedAt)) });
  $('updated').dateTime = payload.generatedAt;
  renderUtilities(payload);
  $('rotation').textContent = rotating ? t('rotation', { index: rotation.index + 1, count: rotation.views.length }) : '';
  layout();
}

/** Everything whose size depends on the screen: figures shrunk to fit, bars, and how many rows the panels hold. */
function layout() {
  if (!lastPayload) return;
  fitFigures();
  renderChart(lastPayload);
  if (lastPayload.scope.area === null) renderAreas(lastPayload);
  renderAlerts(lastPayload);
  // The viewport this layout was fitted to, so a test (or a curious operator) can tell a resize has been handled.
  document.body.dataset.layoutFor = `${innerWidth}x${innerHeight}`;
}

/** The banner: the service's own verdict on its data, or the page's when it cannot reach the service. */
function showState(state, since, reason) {
  const banner = document.querySelector('.banner');
  document.body.dataset.state = state;
  document.body.classList.toggle('is-stale', state !== 'live');
  if (state === 'live') {
    banner.hidden = true;
    return;
  }
  const locale = lastPayload?.platform.locale ?? 'en';
  const timezone = lastPayload?.platform.timezone ?? 'UTC';
  banner.dataset.state = state;
  $('bannerTitle').textContent = t(state === 'failing' ? 'failingTitle' : 'staleTitle');
  $('bannerText').textContent = t('staleText', { time: timeOf(locale, timezone, since), reason: t(`reason.${reason}`) });
  banner.hidden = false;
}

function showUnknownArea(name, site) {
  const names = site?.areas.map((area) => area.name) ?? [];
  if (site) setFigure('siteName', site.platform.siteName, site.platform.siteName);
  $('updated').textContent = '';
  document.body.classList.add('unknown-area');
  document.body.dataset.state = 'unknown-area';
  if (site) useLabels(site);
  $('noticeTitle').textContent = t('unknownArea', { name });
  $('noticeText').textContent = names.length ? t('unknownAreaText', { names: names.join(', ') }) : t('noAreasYet');
  document.querySelector('.notice').hidden = false;
  document.querySelector('.banner').hidden = true;
}

async function fetchView(area, timeoutMs) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const url = area === null ? '/api/wallboard' : `/api/wallboard?area=${encodeURIComponent(area)}`;
    const response = await fetch(url, { cache: 'no-store', headers: { accept: 'application/json' }, signal: controller.signal });
    return { status: response.status, body: response.ok || response.status === 404 ? await response.json() : undefined };
  } finally {
    clearTimeout(timer);
  }
}

/** How often to ask: the site's refresh setting, but at least as often as the meters are collected. */
function pollSec() {
  const refresh = lastPayload?.platform.refreshIntervalSec ?? 30;
  const collect = lastPayload?.dataState.collectIntervalSec ?? refresh;
  return Math.max(MIN_POLL_SEC, Math.min(refresh, collect));
}

async function refresh() {
  clearTimeout(pollTimer);
  try {
    const answer = await fetchView(view, Math.max(5, pollSec()) * 1000);
    if (answer.status === 404 && view !== null) {
      const site = await fetchView(null, 5000).catch(() => undefined);
      showUnknownArea(view, site?.status === 200 ? site.body : undefined);
      lastPayload = undefined;
      return;
    }
    if (answer.status !== 200) throw new Error(`the service answered ${answer.status}`);
    lastPayload = answer.body;
    receivedAt = Date.now();
    clientStaleSince = undefined;
    if (rotating && view === null) rotation.views = [null, ...answer.body.areas.map((area) => area.name)];
    render(answer.body);
    const { dataState } = answer.body;
    showState(dataState.state, new Date(dataState.since ?? answer.body.generatedAt), dataState.reason);
  } catch {
    // The figures on screen are as of the last payload (or of when its data stopped moving, if it already had).
    const asOf = lastPayload?.dataState.since ?? lastPayload?.generatedAt;
    clientStaleSince ??= asOf ? new Date(asOf) : new Date();
    const pill = $('gateway');
    pill.dataset.state = 'unknown';
    pill.textContent = t('gateway.unknown');
    showState('stale', clientStaleSince, 'service');
  } finally {
    // While the live stream is open the page asks on news; the slow re-read only moves the data state's clock.
    pollTimer = setTimeout(refresh, (streamOpen ? LIVE_REREAD_SEC : pollSec()) * 1000);
  }
}

// Live (issue 53): GET /api/wallboard/events says when power, the intervals or the alerts changed (never what); the
// page asks for its payload then instead of on a timer. Down or refused, it polls as before until the stream is back
// (EventSource reconnects by itself, with Last-Event-ID).
const LIVE_REREAD_SEC = 300;
let streamOpen = false;
let newsTimer;
function listen() {
  if (typeof EventSource === 'undefined') return;
  const source = new EventSource('/api/wallboard/events');
  source.addEventListener('hello', () => {
    streamOpen = true;
    document.body.dataset.live = 'on';
  });
  source.addEventListener('changed', () => {
    // One sample may bring several kinds at once: one request for them.
    clearTimeout(newsTimer);
    newsTimer = setTimeout(refresh, 100);
  });
  source.addEventListener('error', () => {
    if (!streamOpen) return;
    streamOpen = false;
    document.body.dataset.live = 'off';
    clearTimeout(pollTimer);
    pollTimer = setTimeout(refresh, pollSec() * 1000);
  });
}

function rotate() {
  rotation.index = (rotation.index + 1) % rotation.views.length;
  view = rotation.views[rotation.index];
  refresh();
}

let resizeTimer;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(layout, 100);
});
// Alert durations move with the clock between polls.
setInterval(() => lastPayload && renderAlerts(lastPayload), 30_000);
if (rotating) setInterval(rotate, rotateSec * 1000);
refresh();
listen();
