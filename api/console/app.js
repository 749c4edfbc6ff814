// The Trainyard console: one ES module, no build step. It calls the same public API as gcloud
// (Vertex routes for jobs, /trainyard/v1 for the rest) on the page's own origin. Everything a user
// typed (names, labels, log lines) reaches the page as text nodes, never as HTML.

const view = document.getElementById('view');
const TOKEN_KEY = 'trainyard.token';        // sessionStorage: this tab only
const SCOPE_KEY = 'trainyard.scope';        // localStorage: the last project and region shown
const REFRESH_MS = 5000;

// ---- the API -------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

let signingIn = null;  // one prompt at a time, however many requests were refused

function askForToken(reason) {
  if (signingIn) return signingIn;
  const dialog = document.getElementById('token-dialog');
  const form = document.getElementById('token-form');
  const input = document.getElementById('token');
  document.getElementById('token-reason').textContent = reason;
  input.value = '';
  signingIn = new Promise((resolve) => {
    form.addEventListener('submit', () => {
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      signingIn = null;
      resolve();
    }, { once: true });
  });
  dialog.showModal();
  input.focus();
  return signingIn;
}

async function api(path, { method = 'GET', body } = {}) {
  for (let attempt = 0; ; attempt++) {
    const headers = { Accept: 'application/json' };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : {}; } catch { json = null; }
    if (response.status === 401 && attempt < 3) {
      sessionStorage.removeItem(TOKEN_KEY);
      await askForToken(json?.error?.message || 'This server asks for a token.');
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, json);
    return json;
  }
}

// ---- small DOM helpers (text only) ---------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className = value;
    else if (key === 'style') Object.assign(node.style, value);  // CSSOM: allowed by the CSP
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function show(...nodes) {
  view.replaceChildren(...nodes);
}

function errorBox(error) {
  const field = error?.body?.error?.details?.flatMap?.((d) => d.fieldViolations || [])?.[0]?.field;
  return el('p', { class: 'error', role: 'alert' },
    error instanceof ApiError ? `${error.status}: ${error.message}` : String(error),
    field ? ` (field ${field})` : '');
}

const STATE_WORDS = {
  JOB_STATE_QUEUED: 'Queued', JOB_STATE_PENDING: 'Pending', JOB_STATE_RUNNING: 'Running',
  JOB_STATE_SUCCEEDED: 'Succeeded', JOB_STATE_FAILED: 'Failed', JOB_STATE_CANCELLING: 'Cancelling',
  JOB_STATE_CANCELLED: 'Cancelled', JOB_STATE_PAUSED: 'Paused', JOB_STATE_EXPIRED: 'Expired',
  JOB_STATE_UPDATING: 'Updating', JOB_STATE_PARTIALLY_SUCCEEDED: 'Partially succeeded',
};
const ENDED = new Set(['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED',
  'JOB_STATE_EXPIRED', 'JOB_STATE_PARTIALLY_SUCCEEDED']);

// What a reason code means, in words first; the scheduler's own message follows.
const REASON_WORDS = {
  NO_CAPACITY: 'Waiting for capacity',
  NO_ZONE_FITS_GANG: 'Waiting for one zone to hold the whole gang',
  QUOTA_EXCEEDED: 'Waiting for quota',
  SHARE_EXHAUSTED: "Waiting: its cohort share is used up",
  WAITING_FOR_DWS: 'Waiting for DWS flex-start capacity',
  HELD_FOR_RESERVATION: 'Waiting: capacity is held for an earlier job',
  NOT_EVALUATED: 'Waiting: not looked at yet',
  BEHIND_HIGHER_PRIORITY: 'Waiting behind higher-priority jobs',
  PREEMPTING: 'Starting soon: lower-priority work is winding down',
  NEVER_FITS: 'Cannot fit this fleet',
  RESOURCE_NOT_READY: 'Waiting for its persistent resource',
  PREEMPTION_NOTICE: 'Being preempted',
  SPOT_NOTICE: 'Spot capacity is being reclaimed',
  WINDOW_END: 'Its reservation window is ending',
  NODE_REPAIR: 'A node is being repaired',
};

function stateWord(state) { return STATE_WORDS[state] || state || '—'; }

function reasonText(job) {
  const reason = job.trainyard?.reason;
  if (!reason?.code || reason.code === 'ADMITTED') return reason?.message || '';
  const words = REASON_WORDS[reason.code] || reason.code;
  return `${words}: ${reason.message || ''}`;
}

function jobId(job) { return job.name.split('/').pop(); }

function when(text) {
  if (!text) return '—';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleString();
}

function seconds(text) {
  const n = Number.parseFloat(String(text || '0').replace(/s$/, ''));
  return Number.isFinite(n) ? n : 0;
}

// "8s", "5m8s", "2h5m": a model-time span as the CLI reads it out (cmd/job_output.cpp, Span).
function span(total) {
  const s = Math.max(0, Math.round(total));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

// The server's model time when it answered for `job` (ms since the epoch), or null. Its goodput
// buckets add up every moment since it was created, accrued to the server's clock at the read
// (services/model/goodput.h). The browser's clock will not do: under --sim-speed model time runs
// faster than the wall, and its epoch is the simulator's.
function modelNow(job) {
  const g = job.trainyard?.goodput;
  const created = Date.parse(job.createTime || '');
  if (!g || Number.isNaN(created)) return null;
  return created + 1000 * ['waitingTime', 'startingTime', 'restartingTime', 'runningTime']
    .reduce((sum, key) => sum + seconds(g[key]), 0);
}

// What a PENDING job waits for before it runs, as `trainyard jobs wait` says it: "booting 1
// a3-highgpu-8g (300 s), then pulling 10 GB (8 s): about 4m50s left, then the program starts
// (60 s)" (model time, as of the last refresh); '' for any other job.
function startupText(job) {
  const startup = job.trainyard?.startup;
  if (job.state !== 'JOB_STATE_PENDING' || !startup) return '';
  // Whole seconds: a drawn boot (services/fleet/startup_model) is rarely a round figure.
  const secs = (text) => `${Math.round(seconds(text))} s`;
  const steps = [];
  if (startup.bootNodes) steps.push(`booting ${startup.bootNodes} ${startup.machineType} (${secs(startup.bootDuration)})`);
  if (startup.imageSizeGb) steps.push(`pulling ${startup.imageSizeGb} GB (${secs(startup.imagePullDuration)})`);
  const what = steps.join(', then ') || 'starting';
  // Then each run's program start-up before its first step (goodput's PROGRAM_STARTUP).
  const program = startup.programStartupDuration
    ? `, then the program starts (${secs(startup.programStartupDuration)})` : '';
  const now = modelNow(job);
  const ready = Date.parse(startup.readyTime || '');
  if (now === null || Number.isNaN(ready)) return `${what}: ready at ${when(startup.readyTime)} (model time)${program}`;
  const left = (ready - now) / 1000;
  return (left >= 1 ? `${what}: about ${span(left)} left` : `${what}: about to start`) + program;
}

// ---- the session: who is asking --------------------------------------------------------------

// GET /trainyard/v1/session: the caller's role (a viewer is shown no button it may not use),
// whether it is the fleet's admin, and the projects it may pick.
let session = { role: 'viewer', fleetAdmin: false, projects: [] };

async function loadSession() {
  session = await api('/trainyard/v1/session');
  document.getElementById('fleet-link').hidden = !session.fleetAdmin;
  document.getElementById('whatif-link').hidden = !session.fleetAdmin;
  const list = document.getElementById('projects');
  list.replaceChildren(...(session.projects || []).map((p) => el('option', { value: p })));
  const current = scope();
  if (session.projects?.length && !session.fleetAdmin && !session.projects.includes(current.project)) {
    setScope(session.projects[0], current.location);
    document.getElementById('project').value = session.projects[0];
  }
}

function mayEdit() { return session.role !== 'viewer'; }
// Persistent resources and their operations are a project admin's (as Vertex's IAM has it).
function mayAdminister() { return session.fleetAdmin || session.role === 'admin'; }

// ---- scope (project and region) ------------------------------------------------------------

function scope() {
  const saved = JSON.parse(localStorage.getItem(SCOPE_KEY) || 'null');
  return saved || { project: 'demo', location: 'us-central1' };
}

function setScope(project, location) {
  localStorage.setItem(SCOPE_KEY, JSON.stringify({ project, location }));
}

function parent({ project, location }) {
  return `projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}`;
}

// ---- refresh while visible -----------------------------------------------------------------

let refreshTimer = null;

function refreshEvery(ms, fn) {
  clearInterval(refreshTimer);
  refreshTimer = setInterval(() => {
    if (document.visibilityState === 'visible') fn().catch(() => {});
  }, ms);
}

// A page's first load, then its refresh while visible; an error of the first takes `where`'s place.
async function loadThenRefresh(load, where) {
  try {
    await load();
  } catch (error) {
    where.replaceWith(errorBox(error));
    return;
  }
  refreshEvery(REFRESH_MS, load);
}

// ---- jobs ----------------------------------------------------------------------------------

function jobsFilter({ state, label, name }) {
  const terms = [];
  if (state) terms.push(`state=${state}`);
  if (label) {
    const [key, value = ''] = label.split('=', 2);
    terms.push(`labels.${key.trim()}="${value.trim().replaceAll('"', '')}"`);
  }
  if (name) terms.push(`display_name="${name.replaceAll('"', '')}"`);
  return terms.join(' AND ');
}

async function jobsPage(params) {
  const { project, location } = scope();
  const form = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
    el('label', {}, 'State', el('select', { name: 'state' },
      el('option', { value: '' }, 'Any'),
      Object.entries(STATE_WORDS).map(([value, words]) =>
        el('option', { value, selected: params.get('state') === value }, words)))),
    el('label', {}, 'Label (key=value)',
      el('input', { name: 'label', value: params.get('label') || '', placeholder: 'team=nlp' })),
    el('label', {}, 'Display name', el('input', { name: 'name', value: params.get('name') || '' })),
    el('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const key of ['state', 'label', 'name']) {
      const value = form.elements[key].value.trim();
      if (value) next.set(key, value);
    }
    window.location.hash = `#/jobs?${next}`;
  });
  const body = el('tbody');
  const status = el('p', { class: 'hint', role: 'status' }, 'Loading…');
  const pager = el('div', { class: 'pager' });
  const counts = el('ul', { class: 'counts', 'aria-label': 'Job counts' });
  const table = el('div', { class: 'scroll' }, el('table', { class: 'cards' },
    el('caption', { class: 'hint hide-narrow' }, `Newest first, ${project} / ${location}`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Job'), el('th', { scope: 'col' }, 'Display name'),
      el('th', { scope: 'col' }, 'State'), el('th', { scope: 'col' }, 'Why / where'),
      el('th', { scope: 'col', class: 'hide-narrow' }, 'Created'))),
    body));
  show(el('h1', {}, 'Jobs'), counts, form, status, table, pager);

  const tokens = params.get('page') ? params.get('page').split(',') : [];
  const filter = jobsFilter({ state: params.get('state'), label: params.get('label'), name: params.get('name') });
  async function load() {
    const query = new URLSearchParams({ pageSize: '50' });
    if (filter) query.set('filter', filter);
    if (tokens.length) query.set('pageToken', tokens[tokens.length - 1]);
    const [page, tally] = await Promise.all([
      api(`/v1/${parent({ project, location })}/customJobs?${query}`),
      api(`/trainyard/v1/${parent({ project, location })}/jobCounts`)]);
    // Each count stops at the cap, which then reads "at least".
    counts.replaceChildren(...(tally.counts || []).map((c) => el('li', {},
      el('a', { href: `#/jobs?state=${c.state}` },
        `${stateWord(c.state)}: ${c.jobs >= tally.cap ? `${c.jobs.toLocaleString()}+` : c.jobs.toLocaleString()}`))));
    const jobs = page.customJobs || [];
    // Rows are replaced in the server's order (newest first, then id): a refresh never reorders.
    body.replaceChildren(...jobs.map((job) => el('tr', {},
      el('td', { 'data-label': 'Job' }, el('a', { href: `#/job/${encodeURIComponent(project)}/${encodeURIComponent(location)}/${jobId(job)}` }, jobId(job))),
      el('td', { 'data-label': 'Name' }, job.displayName || ''),
      el('td', { 'data-label': 'State', class: `state ${String(job.state || '').replace('JOB_STATE_', '')}` }, stateWord(job.state)),
      el('td', { class: 'reason' }, rowReason(job)),
      el('td', { class: 'hide-narrow' }, when(job.createTime)))));
    status.textContent = jobs.length
      ? `${jobs.length} job${jobs.length === 1 ? '' : 's'} on this page; refreshed ${new Date().toLocaleTimeString()}`
      : 'No jobs match.';
    const link = (label, list) => {
      const next = new URLSearchParams(params);
      if (list.length) next.set('page', list.join(',')); else next.delete('page');
      return el('a', { href: `#/jobs?${next}` }, label);
    };
    pager.replaceChildren(
      tokens.length ? link('← Newer', tokens.slice(0, -1)) : '',
      page.nextPageToken ? link('Older →', [...tokens, page.nextPageToken]) : '');
  }
  await loadThenRefresh(load, status);
}

// A row's last word on a job: why it waits, what it starts up (and how long is left), why it
// failed (its error's first line), or where it ran.
function rowReason(job) {
  if (job.state === 'JOB_STATE_QUEUED') return reasonText(job);
  const starting = startupText(job);
  if (starting) return starting;
  if (job.state === 'JOB_STATE_FAILED' && job.error?.message) {
    return `Failed: ${job.error.message.split('\n')[0]}`;
  }
  return placementText(job);
}

function placementText(job) {
  const placement = job.trainyard?.placement;
  if (!placement?.pools?.length) return '';
  const pools = placement.pools.map((p) => `${p.units} ${p.machineType} ${p.consumptionModel}`);
  return `${placement.zone}: ${pools.join(', ')}`;
}

// ---- one job -------------------------------------------------------------------------------

// ML Goodput's badput buckets, in words (the bucket's own name in the tooltip).
const BADPUT_WORDS = {
  TPU_INITIALIZATION: ['Provisioning (boot, image pull)', '#f9ab00'],
  PROGRAM_STARTUP: ['Program start-up', '#795548'],
  UNPRODUCTIVE_CHECKPOINT_SAVE_TIME: ['Saving checkpoints', '#12b5cb'],
  UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME: ['Restoring checkpoints', '#a142f4'],
  WASTED_PROGRESS_FROM_DISRUPTION: ['Work redone after a disruption', '#c5221f'],
  INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION: ['Recovering from disruptions', '#e8710a'],
  OTHER: ['Other', '#607d8b'],
};

function goodputBar(goodput) {
  if (!goodput) return null;
  const parts = [
    ['Productive', seconds(goodput.productiveTime), 'var(--good)', 'productive'],
    ['Waiting for capacity', seconds(goodput.waitingTime), '#9aa4ae', 'scheduling'],
    ...Object.entries(goodput.badput || {}).map(([bucket, time]) =>
      [...(BADPUT_WORDS[bucket] || [bucket, '#607d8b']).slice(0, 1), seconds(time),
        (BADPUT_WORDS[bucket] || [bucket, '#607d8b'])[1], bucket]),
  ].filter(([, value]) => value > 0);
  const total = parts.reduce((sum, [, value]) => sum + value, 0);
  if (total <= 0) return el('p', { class: 'hint' }, 'No time spent yet.');
  return el('figure', { 'aria-label': 'Where the job\'s time went' },
    el('div', { class: 'bars', role: 'img', 'aria-label': parts.map(([n, v]) => `${n} ${v.toFixed(0)} s`).join(', ') },
      parts.map(([name, value, color, code]) => el('span', { title: `${name} (${code}): ${value.toFixed(1)} s`, style: { width: `${(100 * value / total).toFixed(3)}%`, background: color } }))),
    el('ul', { class: 'legend' }, parts.map(([name, value, color, code]) =>
      el('li', { title: code }, el('i', { style: { background: color } }), `${name}: ${value.toFixed(1)} s`))));
}

// Where the job runs: each placed pool's nodes (zone, consumption model) and each replica's state.
function replicaTable(t) {
  const pools = t.placement?.pools || [];
  if (!pools.length && !(t.replicas || []).length) return el('p', { class: 'hint' }, 'Not placed yet.');
  return el('div', {},
    pools.length ? headed(['Zone', 'Machine type', 'Consumption model', 'Nodes'],
      pools.map((p) => el('tr', {}, cells([t.placement.zone, p.machineType, p.consumptionModel,
        (p.nodes || []).join(', ')]))), 'Placement') : '',
    (t.replicas || []).length ? headed(['Replica', 'State', 'Exit code', 'Restarts'],
      t.replicas.map((r) => el('tr', {}, cells([r.taskName, r.state, r.exitCode === undefined ? '' : String(r.exitCode),
        String(r.restarts || 0)]))), 'Replicas') : '');
}

// A host's duty cycle over the minutes this page has been open: a line, 0 to 100%.
function sparkline(values) {
  const svgNs = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(svgNs, 'svg');
  svg.setAttribute('viewBox', '0 0 100 20');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('aria-hidden', 'true');
  const line = document.createElementNS(svgNs, 'polyline');
  const step = values.length > 1 ? 100 / (values.length - 1) : 0;
  line.setAttribute('points', values.map((v, i) => `${(i * step).toFixed(1)},${(20 - 20 * v).toFixed(1)}`).join(' '));
  svg.append(line);
  return svg;
}

function meter(value, label) {
  return el('span', { class: 'metric' }, el('meter', { min: '0', max: '1', value: String(value), 'aria-label': label }),
    ` ${(100 * value).toFixed(0)}%`);
}

// Each host's latest figures, the outliers (hosts well below the gang's median) marked.
function utilizationTable(u, history) {
  for (const h of u.hosts || []) {
    const seen = history.get(h.host) || [];
    seen.push(h.dutyCycle);
    history.set(h.host, seen.slice(-60));
  }
  const gib = (bytes) => `${(bytes / 2 ** 30).toFixed(0)} GiB`;
  return el('div', {},
    el('p', { class: 'hint' }, `Median duty cycle ${(100 * (u.medianDutyCycle || 0)).toFixed(0)}%, sampled ${when(u.sampleTime)}.`,
      (u.outliers || []).length ? ` Outliers: ${u.outliers.join(', ')}.` : ' No outliers.'),
    headed(['Host', 'Accelerators', 'Duty cycle', 'Tensor cores', 'Memory', 'Duty cycle here', ''],
      (u.hosts || []).map((h) => el('tr', { class: h.outlier ? 'outlier' : '' },
        el('td', {}, h.host),
        el('td', {}, `${h.acceleratorCount} × ${h.accelerator}`),
        el('td', {}, meter(h.dutyCycle, `duty cycle of ${h.host}`)),
        el('td', {}, meter(h.tensorCoreUtilization, `tensor cores of ${h.host}`)),
        el('td', {}, `${gib(h.memoryUsedBytes)} of ${gib(h.memoryTotalBytes)}`),
        el('td', {}, sparkline(history.get(h.host) || [])),
        el('td', {}, h.outlier ? el('strong', { class: 'error' }, 'outlier') : ''))), 'Utilization'));
}

async function jobPage(project, location, id) {
  const mine = generation;
  const name = `${parent({ project, location })}/customJobs/${encodeURIComponent(id)}`;
  let job;
  try {
    job = await api(`/v1/${name}`);
  } catch (error) {
    show(el('h1', {}, `Job ${id}`), errorBox(error));
    return;
  }
  const why = el('div');
  const facts = el('dl', { class: 'facts' });
  const timeline = el('ol', { class: 'timeline' });
  const logs = el('pre', { class: 'logs', 'aria-label': 'Logs' });
  const goodput = el('div');
  const cancel = el('button', { type: 'button' }, 'Cancel job');
  const remove = el('button', { type: 'button', class: 'danger' }, 'Delete job');
  const actionStatus = el('span', { role: 'status', class: 'hint' });
  cancel.addEventListener('click', async () => {
    if (!confirm(`Cancel job ${id}?`)) return;
    try {
      await api(`/v1/${name}:cancel`, { method: 'POST', body: {} });
      actionStatus.textContent = 'Cancel requested.';
      await render();
    } catch (error) { actionStatus.replaceChildren(errorBox(error)); }
  });
  remove.addEventListener('click', async () => {
    if (!confirm(`Delete job ${id}? This cannot be undone.`)) return;
    try {
      await api(`/v1/${name}`, { method: 'DELETE' });
      if (stillShown(mine)) window.location.hash = '#/jobs';
    } catch (error) { actionStatus.replaceChildren(errorBox(error)); }
  });
  const replicas = el('div');
  const utilization = el('div');
  const history = new Map();  // host → its duty cycles while this page is open, newest last
  show(el('p', {}, el('a', { href: '#/jobs' }, '← All jobs')),
    el('h1', {}, job.displayName || `Job ${id}`), why, facts,
    mayEdit() ? el('div', { class: 'actions' }, cancel, remove, actionStatus) : '',
    el('h2', {}, 'Replicas and nodes'), replicas,
    el('h2', {}, 'Accelerator utilization'), utilization,
    el('h2', {}, 'Where its time went'), goodput,
    el('h2', {}, 'Timeline'), timeline,
    el('h2', {}, 'Logs'), logs);

  let lastLog = '';
  async function render() {
    job = await api(`/v1/${name}`);
    const t = job.trainyard || {};
    const starting = startupText(job);
    why.replaceChildren();
    if (job.state === 'JOB_STATE_QUEUED' && t.reason?.code) {
      why.append(el('div', { class: 'why', role: 'status' },
        el('strong', {}, `${REASON_WORDS[t.reason.code] || t.reason.code}${t.queuePosition ? ` (position ${t.queuePosition} in its queue)` : ''}`),
        el('span', {}, t.reason.message || ''), ' ', el('code', {}, t.reason.code)));
    } else if (starting) {
      why.append(el('div', { class: 'why', role: 'status' }, el('strong', {}, 'Starting up'), el('span', {}, starting)));
    } else if (t.reason?.code && t.reason.code !== 'ADMITTED' && !ENDED.has(job.state)) {
      why.append(el('div', { class: 'why', role: 'status' }, reasonText(job)));
    }
    if (job.error?.message) why.append(el('p', { class: 'error' }, job.error.message));
    const rows = [
      ['Job', id], ['State', stateWord(job.state)], ['Created', when(job.createTime)],
      ['Started', when(job.startTime)], ['Ended', when(job.endTime)],
      ['Where', placementText(job) || '—'],
      ['Cost', t.costUsd !== undefined ? `$${Number(t.costUsd).toFixed(2)}` : '—'],
      ['Cost per productive accelerator-hour', t.costPerProductiveAcceleratorHourUsd !== undefined ? `$${Number(t.costPerProductiveAcceleratorHourUsd).toFixed(2)}` : '—'],
      ['Goodput', t.goodput?.ratio !== undefined ? `${(100 * t.goodput.ratio).toFixed(1)}%` : '—'],
      ['Labels', Object.entries(job.labels || {}).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
    ];
    facts.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
    goodput.replaceChildren(goodputBar(t.goodput) || '');
    replicas.replaceChildren(replicaTable(t));
    cancel.disabled = ENDED.has(job.state) || job.state === 'JOB_STATE_CANCELLING';
    remove.disabled = !ENDED.has(job.state);
    if (job.state === 'JOB_STATE_RUNNING') {
      const u = await api(`/trainyard/v1/${name}/utilization`);
      utilization.replaceChildren(utilizationTable(u, history));
    } else if (!utilization.hasChildNodes()) {
      utilization.append(el('p', { class: 'hint' }, 'Shown while the job runs.'));
    }
    const events = await api(`/trainyard/v1/${name}/events`);
    timeline.replaceChildren(...(events.events || []).map((e) => el('li', {},
      el('time', { datetime: e.time }, when(e.time)),
      e.fromState === e.toState ? ''
        : e.fromState === 'JOB_STATE_UNSPECIFIED' ? `${stateWord(e.toState)}: `
          : `${stateWord(e.fromState)} → ${stateWord(e.toState)}: `,
      e.reason || '')));
    const query = new URLSearchParams({ pageSize: '200' });
    if (lastLog) query.set('after', lastLog);
    const page = await api(`/trainyard/v1/${name}/logs?${query}`);
    for (const entry of page.entries || []) {
      logs.append(document.createTextNode(`${entry.timestamp} ${entry.labels?.task_name || ''} ${entry.textPayload || ''}\n`));
      lastLog = entry.insertId || lastLog;
    }
  }
  try {
    await render();
  } catch (error) {
    why.replaceChildren(errorBox(error));
  }
  if (!ENDED.has(job.state)) {
    refreshEvery(REFRESH_MS, async () => {
      await render();
      if (ENDED.has(job.state)) clearInterval(refreshTimer);
    });
  }
}

// ---- persistent resources ------------------------------------------------------------------

const RESOURCE_STATE_WORDS = {
  PROVISIONING: 'Provisioning', RUNNING: 'Running', STOPPING: 'Stopping', ERROR: 'Error',
  REBOOTING: 'Rebooting', UPDATING: 'Updating',
};
// Machine types a console user can pick for a new pool, with what they carry.
const POOL_MACHINES = {
  'a3-highgpu-8g': { acceleratorType: 'NVIDIA_H100_80GB', acceleratorCount: 8 },
  'a3-megagpu-8g': { acceleratorType: 'NVIDIA_H100_MEGA_80GB', acceleratorCount: 8 },
  'g2-standard-12': { acceleratorType: 'NVIDIA_L4', acceleratorCount: 1 },
  'n2-standard-8': {},
};

function resourceId(resource) { return resource.name.split('/').pop(); }

// Follows a long-running operation to its end, saying what it is doing meanwhile.
async function follow(operation, status) {
  let op = operation;
  while (!op.done) {
    status.textContent = op.metadata?.progressMessage || 'Working…';
    op = await api(`/v1/${op.name}:wait?timeout=10s`, { method: 'POST', body: {} });
  }
  if (op.error) throw new ApiError(400, { error: op.error });
  status.textContent = 'Done.';
  return op;
}

async function resourcesPage() {
  const { project, location } = scope();
  const status = el('p', { class: 'hint', role: 'status' }, 'Loading…');
  const body = el('tbody');
  const create = el('div');
  show(el('h1', {}, 'Persistent resources'), status,
    el('div', { class: 'scroll' }, el('table', { class: 'cards', 'aria-label': 'Persistent resources' },
      el('thead', {}, el('tr', {}, ['Resource', 'State', 'Pools', 'Created'].map((c) => el('th', { scope: 'col' }, c)))),
      body)),
    create);
  async function load() {
    const page = await api(`/v1/${parent({ project, location })}/persistentResources?pageSize=100`);
    const resources = page.persistentResources || [];
    body.replaceChildren(...resources.map((r) => el('tr', {},
      el('td', { 'data-label': 'Resource' },
        el('a', { href: `#/resource/${encodeURIComponent(project)}/${encodeURIComponent(location)}/${resourceId(r)}` }, resourceId(r)),
        r.displayName && r.displayName !== resourceId(r) ? el('span', { class: 'display-name' }, ` ${r.displayName}`) : ''),
      el('td', { 'data-label': 'State' }, RESOURCE_STATE_WORDS[r.state] || r.state),
      el('td', { 'data-label': 'Pools' }, (r.resourcePools || []).map((p) =>
        `${p.replicaCount} × ${p.machineSpec?.machineType}`).join(', ')),
      el('td', { class: 'hide-narrow' }, when(r.createTime)))));
    status.textContent = resources.length ? `${resources.length} in ${project} / ${location}` : 'None yet.';
  }
  if (mayAdminister()) create.append(createResourceForm(project, location, load));
  await loadThenRefresh(load, status);
}

function createResourceForm(project, location, reload) {
  const mine = generation;
  const progress = el('p', { class: 'hint', role: 'status' });
  const form = el('form', { class: 'filters', 'aria-label': 'Create a persistent resource' },
    el('label', {}, 'Resource ID', el('input', { name: 'id', required: true, pattern: '[a-z][a-z0-9\\-]{0,62}' })),
    el('label', {}, 'Machine type', el('select', { name: 'machine' },
      Object.keys(POOL_MACHINES).map((m) => el('option', { value: m }, m)))),
    el('label', {}, 'Replicas', el('input', { name: 'replicas', type: 'number', min: '1', value: '1', required: true })),
    el('button', { type: 'submit' }, 'Create'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const machine = form.elements.machine.value;
    const body = { resourcePools: [{ id: 'pool-0', machineSpec: { machineType: machine, ...POOL_MACHINES[machine] },
      replicaCount: String(form.elements.replicas.value) }] };
    try {
      const op = await api(`/v1/${parent({ project, location })}/persistentResources?persistentResourceId=${encodeURIComponent(form.elements.id.value)}`,
        { method: 'POST', body });
      if (stillShown(mine)) await reload();
      await follow(op, progress);
      if (stillShown(mine)) await reload();
    } catch (error) { progress.replaceChildren(errorBox(error)); }
  });
  return el('section', {}, el('h2', {}, 'Create one'), form, progress);
}

async function resourcePage(project, location, id) {
  const name = `${parent({ project, location })}/persistentResources/${encodeURIComponent(id)}`;
  const facts = el('dl', { class: 'facts' });
  const pools = el('div');
  const progress = el('p', { class: 'hint', role: 'status' });
  const actions = el('div', { class: 'actions' });
  const nodes = el('div');
  show(el('p', {}, el('a', { href: '#/resources' }, '← All persistent resources')),
    el('h1', {}, `Persistent resource ${id}`), facts, mayAdminister() ? actions : '', progress,
    el('h2', {}, 'Pools'), pools, el('h2', {}, 'Nodes'), nodes);
  let resource;
  const mine = generation;
  async function act(what, request) {
    // A resource being deleted is not read again: a refresh would only find it gone (404).
    if (what === 'delete' && stillShown(mine)) clearInterval(refreshTimer);
    try {
      const op = await request();
      if (what !== 'delete' && stillShown(mine)) await render();
      await follow(op, progress);
      if (!stillShown(mine)) return;
      if (what === 'delete') { window.location.hash = '#/resources'; return; }
      await render();
    } catch (error) {
      progress.replaceChildren(errorBox(error));
      if (what === 'delete' && stillShown(mine)) refreshEvery(REFRESH_MS, render);
    }
  }
  const reboot = el('button', { type: 'button' }, 'Reboot');
  reboot.addEventListener('click', () => {
    if (confirm(`Reboot ${id}? Its jobs are stopped and restarted.`)) {
      act('reboot', () => api(`/v1/${name}:reboot`, { method: 'POST', body: {} }));
    }
  });
  const remove = el('button', { type: 'button', class: 'danger' }, 'Delete');
  remove.addEventListener('click', () => {
    if (confirm(`Delete ${id}? Its nodes are given back.`)) act('delete', () => api(`/v1/${name}`, { method: 'DELETE' }));
  });
  actions.append(reboot, remove);
  async function render() {
    resource = await api(`/v1/${name}`);
    facts.replaceChildren(...[['State', RESOURCE_STATE_WORDS[resource.state] || resource.state],
      ['Created', when(resource.createTime)], ['Labels', Object.entries(resource.labels || {}).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
      ['Error', resource.error?.message || '—']].flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
    const placed = resource.trainyard?.placement;
    const held = (placed?.pools || []).flatMap((p) => (p.nodes || []).map((n) => [n, p]));
    // The image cache of each node is the fleet's (fleet admins read the nodes).
    const caches = new Map();
    if (session.fleetAdmin && held.length) {
      for (const pool of new Set((placed.pools || []).map((p) => p.pool))) {
        const listed = await api(`/trainyard/v1/nodes?pool=${encodeURIComponent(pool)}`).catch(() => null);
        for (const n of listed?.nodes || []) caches.set(n.name, (n.imageCache || []).join(', '));
      }
    }
    nodes.replaceChildren(held.length ? headed(['Node', 'Zone', 'Consumption model', session.fleetAdmin ? 'Images cached' : ''],
      held.map(([n, p]) => el('tr', {}, cells([n, placed.zone, p.consumptionModel, caches.get(n) ?? '']))), 'Nodes')
      : el('p', { class: 'hint' }, resource.trainyard?.reason?.message || 'No nodes held yet.'));
    if (pools.contains(document.activeElement)) return;  // a refresh must not eat what is typed
    pools.replaceChildren(headed(['Pool', 'Machine type', 'Replicas', 'In use', 'Autoscaling', ''],
      (resource.resourcePools || []).map((p, i) => {
        const resize = el('form', { class: 'filters', 'aria-label': `Resize ${p.id}` },
          el('label', {}, 'Replicas', el('input', { name: 'replicas', type: 'number', min: '0', value: String(p.replicaCount) })),
          el('button', { type: 'submit' }, 'Resize'));
        resize.addEventListener('submit', (event) => {
          event.preventDefault();
          const wanted = String(resize.elements.replicas.value);
          if (!confirm(`Resize ${p.id} of ${id} to ${wanted} replicas?`)) return;
          const resourcePools = resource.resourcePools.map((q, j) => (j === i ? { ...q, replicaCount: wanted } : q));
          act('resize', () => api(`/v1/${name}?updateMask=resource_pools.replica_count`, { method: 'PATCH', body: { resourcePools } }));
        });
        return el('tr', {}, cells([p.id, p.machineSpec?.machineType, String(p.replicaCount),
          String(p.usedReplicaCount ?? '0'),
          p.autoscalingSpec ? `${p.autoscalingSpec.minReplicaCount}–${p.autoscalingSpec.maxReplicaCount}` : '—']),
        el('td', {}, mayAdminister() ? resize : ''));
      }), 'Pools'));
  }
  await loadThenRefresh(render, facts);
}

// ---- the fleet (fleet admins) ----------------------------------------------------------------

function cells(values) { return values.map((v) => el('td', {}, v)); }

function headed(columns, rows, label) {
  return el('div', { class: 'scroll' }, el('table', { 'aria-label': label },
    el('thead', {}, el('tr', {}, columns.map((c) => el('th', { scope: 'col' }, c)))),
    el('tbody', {}, rows)));
}

async function fleetPage() {
  const status = el('p', { class: 'hint', role: 'status' }, 'Loading…');
  const pools = el('div');
  const queues = el('div');
  const costs = el('div');
  const cohortsBox = el('div');
  let spentOnce = null;  // the projects' costs, read once a visit
  show(el('h1', {}, 'Fleet'), status,
    el('h2', {}, 'Capacity by zone, machine type and consumption model'), pools,
    el('h2', {}, 'Queues'), queues,
    el('h2', {}, 'Cohorts'), cohortsBox,
    el('h2', {}, 'Costs by project and consumption model'), costs);
  async function load() {
    // Costs of every project the caller may pick (the first 20), else of the one shown: each
    // sums all of a project's jobs, so they are read when the page opens, not at every refresh.
    const projects = (session.projects?.length ? session.projects : [scope().project]).slice(0, 20);
    spentOnce ??= Promise.all(projects.map((p) =>
      api(`/trainyard/v1/projects/${encodeURIComponent(p)}/costs`).catch(() => null)));
    const [fleet, queued, spent] = await Promise.all([
      api('/trainyard/v1/fleet'), api('/trainyard/v1/queues'), spentOnce]);
    const rows = [];
    for (const region of fleet.regions || []) {
      for (const zone of region.zones || []) {
        for (const pool of zone.pools || []) {
          const by = pool.nodesByState || {};
          rows.push(el('tr', {}, cells([zone.zone, pool.machineType, pool.consumptionModel,
            pool.reservation?.name || '', String(pool.nodesHeld ?? 0),
            String(Math.max(0, (pool.unitsUsableNow ?? pool.units ?? 0) - (pool.nodesHeld ?? 0))),
            String((by.FAILED || 0) + (by.PREEMPTED || 0)), String(by.REPAIRING || 0),
            pool.pricePerNodeHourUsd !== undefined ? `$${pool.pricePerNodeHourUsd.toFixed(2)}` : ''])));
        }
      }
    }
    pools.replaceChildren(headed(['Zone', 'Machine type', 'Model', 'Reservation', 'In use', 'Free',
      'Failed', 'Repairing', 'Per node-hour'], rows, 'Capacity'));
    queues.replaceChildren(headed(['Project', 'Region', 'Queued', 'Why they wait', 'Pending', 'Running', 'Cancelling'],
      (queued.queues || []).map((q) => el('tr', {}, cells([q.project, q.region, String(q.queued),
        Object.entries(q.queuedByReason || {}).map(([code, n]) => `${REASON_WORDS[code] || code}: ${n}`).join('; '),
        String(q.pending), String(q.running), String(q.cancelling)]))), 'Queues'));
    const cohorts = fleet.cohorts || [];
    cohortsBox.replaceChildren(cohorts.length ? headed(['Cohort', 'Resource', 'Member', 'Nominal', 'Used', 'Borrowed', 'Lent'],
      cohorts.flatMap((c) => (c.resources || []).flatMap((r) => (r.members || []).map((m) => el('tr', {},
        cells([c.name, r.resource, m.project, String(m.nominal ?? ''), String(m.used ?? ''),
          String(m.borrowed ?? ''), String(m.lent ?? '')]))))), 'Cohorts')
      : el('p', { class: 'hint' }, 'No cohorts: each project has its own quota.'));
    const perHour = (x) => (x === undefined ? '—' : `$${x.toFixed(2)}`);
    const costRows = spent.flatMap((c) => (c ? (c.byConsumptionModel || []).map((m) => el('tr', {},
      cells([c.project, m.consumptionModel, String(m.jobs), `$${m.accruedUsd.toFixed(2)}`,
        `$${m.runningUsd.toFixed(2)}`, perHour(m.costPerProductiveAcceleratorHourUsd)]))) : []));
    costs.replaceChildren(costRows.length ? headed(['Project', 'Consumption model', 'Jobs', 'Accrued',
      'Running', 'Per productive accelerator-hour'], costRows, 'Costs')
      : el('p', { class: 'hint' }, 'No costs yet.'));
    status.textContent = `Refreshed ${new Date().toLocaleTimeString()}`;
  }
  await loadThenRefresh(load, status);
}

// ---- what-if (fleet admins) ------------------------------------------------------------------

const MONEY = (n) => `$${Math.round(n).toLocaleString()}`;

// The comparison's rows, each scenario a column: what a platform team weighs.
function comparisonTable(comparison) {
  const scenarios = comparison.scenarios || [];
  const rows = [
    ['Capacity cost', (s) => MONEY(s.cost_usd?.total ?? 0)],
    ['Cost per productive accelerator-hour', (s) => `$${(s.cost_per_productive_accelerator_hour ?? 0).toFixed(2)}`],
    ['Wait p50 / p95 / p99', (s) => ['p50', 'p95', 'p99'].map((p) => `${Math.round(s.wait_seconds?.[p] ?? 0).toLocaleString()} s`).join(' / ')],
    ['Job completion p50 / p95', (s) => ['p50', 'p95'].map((p) => `${Math.round(s.jct_seconds?.[p] ?? 0).toLocaleString()} s`).join(' / ')],
    ['Goodput (runtime / scheduling)', (s) => `${(s.goodput ?? 0).toFixed(3)} / ${(s.scheduling_goodput ?? 0).toFixed(3)}`],
    ['Jobs succeeded / failed / unfinished', (s) => `${s.succeeded} / ${s.failed} / ${s.unfinished}`],
    ['Spot preemptions', (s) => String(s.preemptions ?? 0)],
  ];
  return headed(['', ...scenarios.map((s) => s.scenario)],
    rows.map(([label, f]) => el('tr', {}, el('th', { scope: 'row' }, label), cells(scenarios.map(f)))),
    'Comparison');
}

async function whatIfPage() {
  const status = el('p', { class: 'hint', role: 'status' });
  const result = el('div');
  let offered;
  try {
    offered = (await api('/trainyard/v1/whatif/scenarios')).scenarios || [];
  } catch (error) {
    show(el('h1', {}, 'What-if'), errorBox(error));
    return;
  }
  const form = el('form', { 'aria-label': 'Run a comparison' },
    el('fieldset', {}, el('legend', {}, 'Scenarios to compare'),
      offered.map((name) => el('label', { class: 'check' },
        el('input', { type: 'checkbox', name: 'scenario', value: name }), ` ${name}`))),
    el('fieldset', {}, el('legend', {}, 'And one of your own (optional)'),
      el('div', { class: 'filters' },
        el('label', {}, 'Scenario (JSON)', el('input', { name: 'upload', type: 'file', accept: '.json,application/json' })),
        el('label', {}, 'Its trace (CSV, SWF or JSONL)', el('input', { name: 'trace', type: 'file' }))),
      el('p', { class: 'hint' }, 'Its workload is the trace you send; its fleet is inline or one of the server\'s (e.g. "fleet.json"). Up to 1 MiB in all.')),
    el('div', { class: 'filters' },
      el('label', {}, 'Seed (optional)', el('input', { name: 'seed', type: 'number', min: '0' })),
      el('button', { type: 'submit' }, 'Run')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const scenarios = [...form.querySelectorAll('input[name=scenario]:checked')].map((c) => c.value);
    const body = { scenarios };
    if (form.elements.seed.value !== '') body.seed = Number(form.elements.seed.value);
    const [mine, trace] = [form.elements.upload.files[0], form.elements.trace.files[0]];
    if (mine) {
      body.upload = { scenario: await mine.text(), trace: trace ? await trace.text() : '',
        traceName: trace ? trace.name : 'trace.csv' };
    }
    result.replaceChildren();
    try {
      let run = await api('/trainyard/v1/whatif/runs', { method: 'POST', body });
      while (run.state === 'RUNNING') {
        status.textContent = `Running: ${run.progress}`;
        await new Promise((r) => setTimeout(r, 500));
        run = await api(`/trainyard/v1/${run.name}`);
      }
      if (run.state === 'FAILED') throw new ApiError(400, { error: run.error });
      status.textContent = `Done: ${(run.comparison?.scenarios || []).map((c) => c.scenario).join(' vs ')}`;
      result.replaceChildren(comparisonTable(run.comparison),
        ...Object.entries(run.plots || {}).map(([file, svg]) => el('figure', {},
          el('img', { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`, alt: file.replace('.svg', '').replaceAll('_', ' '), class: 'plot' }),
          el('figcaption', { class: 'hint' }, file))));
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  });
  show(el('h1', {}, 'What-if'),
    el('p', {}, 'Replays each scenario\'s workload through this server\'s own scheduler, on the capacity mix it names, and compares them (trainyard simulate, on the server; one run at a time).'),
    form, status, result);
}

// ---- routing -------------------------------------------------------------------------------

// Each page shown gets a new generation: what a page started (an operation it follows, a reload)
// checks it is still the page shown before it renders or navigates, so a user who moved on is
// never pulled back.
let generation = 0;
function stillShown(mine) { return mine === generation; }

async function route() {
  generation += 1;
  clearInterval(refreshTimer);
  const hash = window.location.hash || '#/jobs';
  const [path, query = ''] = hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'job' && parts.length === 4) {
    await jobPage(parts[1], parts[2], parts[3]);
  } else if (parts[0] === 'resources') {
    await resourcesPage();
  } else if (parts[0] === 'resource' && parts.length === 4) {
    await resourcePage(parts[1], parts[2], parts[3]);
  } else if (parts[0] === 'whatif') {
    await whatIfPage();
  } else if (parts[0] === 'fleet') {
    await fleetPage();
  } else {
    await jobsPage(new URLSearchParams(query));
  }
  view.focus({ preventScroll: true });
}

function start() {
  const form = document.getElementById('scope');
  const current = scope();
  form.elements.project.value = current.project;
  form.elements.location.value = current.location;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setScope(form.elements.project.value.trim(), form.elements.location.value.trim());
    if (window.location.hash === '#/jobs') route(); else window.location.hash = '#/jobs';
  });
  window.addEventListener('hashchange', route);
  loadSession().catch(() => {}).finally(route);
}

start();
