// The web console in a real browser (Debian's chromium, driven by playwright-core), acting as a
// user does: by visible text, roles and labels. The jobs come from the API (curl, in
// tests/e2e/console_test.sh); what the console does is checked against the API.
//
// Environment: BASE (a server with --auth=off), TOKEN_BASE and TOKEN (one with --auth=tokens and a
// viewer token for project demo), WAITING, LONG (job ids: one that cannot fit, one still running),
// BOOTING (one PENDING for a day of model time, its g2-standard-48 node booting).
'use strict';

const { chromium } = require('playwright-core');
const { check, until, run } = require('./harness');

const BASE = process.env.BASE;
const TOKEN_BASE = process.env.TOKEN_BASE;
const TOKEN = process.env.TOKEN;
const WAITING = process.env.WAITING;
const LONG = process.env.LONG;
const FAILING = process.env.FAILING;
const BOOTING = process.env.BOOTING;

// The checks that must hold on every page: no script error, nothing logged as an error.
// (The browser logs each refused request; a 401 before the token is given is the sign-in flow.)
function watch(page, errors, { refusals = false } = {}) {
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (refusals && /status of 401/.test(m.text())) return;
    errors.push(`console on ${page.url()}: ${m.text()}`);
  });
}

async function apiJob(id) {
  const r = await fetch(`${BASE}/v1/projects/demo/locations/us-central1/customJobs/${id}`);
  return r.json();
}

async function jobState(id) {
  return (await apiJob(id)).state;
}

// What is left of a PENDING job's startup on the server's model clock, in seconds: it became
// PENDING when admitted, and its goodput's startingTime has counted from then to the read.
const seconds = (text) => Number.parseFloat(String(text).replace(/s$/, ''));
function startupLeft(job) {
  return seconds(job.trainyard.startup.duration) - seconds(job.trainyard.goodput.startingTime);
}

// The booting job's line, the same in its row and on its page; the time left in hours and minutes.
// The boot and the pull are the fleet's draws for this job: the API's figures, in whole seconds.
const STARTUP_LINE = /booting 1 g2-standard-48 \((\d+) s\), then pulling 10 GB \((\d+) s\): about (\d+)h(\d+)m left/;
const startupShownAsTheApiSaysIt = (m, job) => m !== null &&
  Number(m[1]) === Math.round(seconds(job.trainyard.startup.bootDuration)) &&
  Number(m[2]) === Math.round(seconds(job.trainyard.startup.imagePullDuration));

async function main() {
  const args = ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args });
  try {
    const errors = [];
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    watch(page, errors);

    // The jobs made with curl are in the table, newest first. (What is left of the booting job's
    // startup before the console first reads it: see below.)
    const leftBefore = startupLeft(await apiJob(BOOTING));
    await page.goto(`${BASE}/console/`);
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();
    await page.getByRole('cell', { name: 'console-waiting' }).waitFor();
    check('the jobs page lists the jobs made with curl',
      await page.getByRole('cell', { name: 'console-long' }).isVisible());
    const byState = page.getByRole('list', { name: 'Job counts' });
    await byState.getByRole('link', { name: /^Queued: 1$/ }).waitFor();
    check('and counts them by state', true);
    check('the console is served gzipped, with an ETag',
      await (async () => {
        const r = await page.request.get(`${BASE}/console/app.js`, { headers: { 'accept-encoding': 'gzip' } });
        return r.headers()['content-encoding'] === 'gzip' && Boolean(r.headers().etag);
      })());

    // A failed job's row says why it failed, as a waiting one's says why it waits.
    const failedRow = page.getByRole('row').filter({ hasText: 'console-failing' });
    const failedError = (await (await fetch(`${BASE}/v1/projects/demo/locations/us-central1/customJobs/${FAILING}`)).json()).error;
    check('a failed job\'s row says why it failed (its error\'s first line)',
      (await failedRow.textContent()).includes(`Failed: ${failedError.message.split('\n')[0]}`),
      await failedRow.textContent());

    // A starting job's row says what it waits for and how long is left, as `trainyard jobs wait`
    // does; the time left is counted on the server's model clock, which at --sim-speed 100 is far
    // from the browser's: it lies between what the API said before the page read it and after.
    const bootingRow = page.getByRole('row').filter({ hasText: 'console-booting' });
    await bootingRow.waitFor();
    let bootingText = '';
    const shown = await until('the booting job\'s startup line', async () => {
      bootingText = await bootingRow.textContent();
      return STARTUP_LINE.exec(bootingText);
    }, 30).catch(() => null);
    const bootingJob = await apiJob(BOOTING);
    const leftAfter = startupLeft(bootingJob);
    check('a PENDING job\'s row says what it starts up and how long is left',
      startupShownAsTheApiSaysIt(shown, bootingJob), bootingText);
    const shownLeft = shown ? 3600 * Number(shown[3]) + 60 * Number(shown[4]) : NaN;
    check('and the time left is the server\'s (model time), not the browser\'s',
      leftAfter - 61 <= shownLeft && shownLeft <= leftBefore + 1, { shownLeft, leftBefore, leftAfter });

    // Filtering by state goes to the server.
    await page.getByLabel('State').selectOption('JOB_STATE_QUEUED');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/state=JOB_STATE_QUEUED/);
    await page.getByRole('cell', { name: 'console-waiting' }).waitFor();
    check('a state filter shows only that state',
      !(await page.getByRole('cell', { name: 'console-long' }).isVisible()));

    // Why it waits, in plain words first, with the scheduler's reason.
    await page.getByRole('link', { name: WAITING }).click();
    await page.getByRole('heading', { name: 'console-waiting' }).waitFor();
    const why = page.getByRole('status').filter({ hasText: 'fit this fleet' });
    await why.first().waitFor();
    check('a job that cannot fit says so in words, with its reason code',
      (await why.first().textContent()).includes('NEVER_FITS'), await why.first().textContent());
    // The timeline is read after the job (a second request): wait for it, with a deadline.
    check('its timeline shows it was created',
      await page.getByRole('listitem').filter({ hasText: 'created' }).first().waitFor({ timeout: 30000 })
        .then(() => true, () => false));

    // The starting job's page says the same, under "Starting up".
    await page.goto(`${BASE}/console/#/job/demo/us-central1/${BOOTING}`);
    await page.getByRole('heading', { name: 'console-booting' }).waitFor();
    const startingUp = page.getByRole('status').filter({ hasText: 'Starting up' });
    await startingUp.waitFor();
    check('a PENDING job\'s page says what it starts up and how long is left',
      startupShownAsTheApiSaysIt(STARTUP_LINE.exec(await startingUp.textContent()), bootingJob),
      await startingUp.textContent());

    // Cancel from the console, behind a confirmation; the API sees it.
    await page.goto(`${BASE}/console/#/job/demo/us-central1/${LONG}`);
    await page.getByRole('heading', { name: 'console-long' }).waitFor();
    let asked = '';
    page.once('dialog', (d) => { asked = d.message(); d.accept(); });
    await page.getByRole('button', { name: 'Cancel job' }).click();
    await until('the cancel', async () => ['JOB_STATE_CANCELLING', 'JOB_STATE_CANCELLED'].includes(await jobState(LONG)));
    check('cancel asks first', asked.includes(`Cancel job ${LONG}?`), asked);
    check('the API sees the job cancelled', true);

    // A running gang with a straggler: each host's utilization, the slow one marked.
    await page.goto(`${BASE}/console/#/job/demo/us-central1/${process.env.GANG}`);
    await page.getByRole('heading', { name: 'console-gang' }).waitFor();
    const hosts = page.getByRole('table', { name: 'Utilization' });
    await hosts.getByRole('row').filter({ hasText: 'outlier' }).first().waitFor({ timeout: 60000 });
    check('a gang\'s page shows where it runs, node by node',
      (await page.getByRole('table', { name: 'Placement' }).getByRole('row').count()) >= 2);
    check('and each replica\'s state',
      await page.getByRole('table', { name: 'Replicas' }).getByRole('row').filter({ hasText: 'workerpool0-0' }).isVisible());
    check('a running gang shows each host\'s utilization, the straggler marked an outlier',
      (await hosts.getByRole('row').filter({ hasText: 'outlier' }).count()) === 1,
      await hosts.getByRole('row').filter({ hasText: 'outlier' }).count());

    // A fleet admin (no tokens: everyone is) sees the fleet: capacity by pool, queues, costs.
    await page.goto(`${BASE}/console/`);
    await page.getByRole('link', { name: 'Fleet' }).click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    const capacity = page.getByRole('table', { name: 'Capacity' });
    await capacity.getByRole('row').filter({ hasText: 'a3-megagpu-8g' }).first().waitFor();
    check('the fleet page shows capacity by zone, machine type and model',
      await capacity.getByRole('row').filter({ hasText: 'RESERVATION' }).first().isVisible());
    const demoQueue = page.getByRole('table', { name: 'Queues' }).getByRole('row').filter({ hasText: 'demo' }).first();
    check('and the costs by project and consumption model',
      await page.getByRole('table', { name: 'Costs' }).getByRole('row').filter({ hasText: 'demo' }).first().isVisible());
    check('and the queues, the demo project\'s with why its jobs wait',
      (await demoQueue.textContent()).includes('Cannot fit this fleet: 1'), await demoQueue.textContent());

    // A persistent resource made, resized and deleted from the console, each step followed to
    // the end of its operation; the API sees each.
    const resourceApi = `${BASE}/v1/projects/demo/locations/us-central1/persistentResources/console-pool`;
    await page.getByRole('link', { name: 'Persistent resources' }).click();
    await page.getByRole('heading', { name: 'Persistent resources' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'named-pool' }).waitFor();
    check('a persistent resource shows its display name beside its id',
      (await page.getByRole('row').filter({ hasText: 'named-pool' }).textContent()).includes('The named pool'));
    const form = page.getByRole('form', { name: 'Create a persistent resource' });
    await form.getByLabel('Resource ID').fill('console-pool');
    await form.getByLabel('Machine type').selectOption('a3-highgpu-8g');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').filter({ hasText: 'Done.' }).waitFor({ timeout: 60000 });
    check('a resource created from the console runs',
      (await (await fetch(resourceApi)).json()).state === 'RUNNING');
    await page.getByRole('link', { name: 'console-pool' }).click();
    await page.getByRole('heading', { name: 'Persistent resource console-pool' }).waitFor();
    await page.getByRole('table', { name: 'Nodes' }).getByRole('row').nth(1).waitFor();
    check('a resource\'s page lists its nodes and what images they hold',
      (await page.getByRole('table', { name: 'Nodes' }).getByRole('columnheader').allTextContents()).includes('Images cached'));
    const resize = page.getByRole('form', { name: 'Resize pool-0' });
    await resize.getByLabel('Replicas').fill('2');
    page.once('dialog', (d) => d.accept());
    await resize.getByRole('button', { name: 'Resize' }).click();
    await until('the resize', async () =>
      (await (await fetch(resourceApi)).json()).resourcePools?.[0]?.replicaCount === '2', 60);
    check('a resize from the console reaches the resource', true);
    await page.getByRole('status').filter({ hasText: 'Done.' }).waitFor({ timeout: 60000 });
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await until('the delete', async () => (await fetch(resourceApi)).status === 404, 60);
    check('a delete from the console removes it', true);
    // Moving on while the console still follows the delete must not pull the user back.
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();

    // What-if: two of the shipped scenarios compared on the server, the table and plots shown.
    await page.getByRole('link', { name: 'What-if' }).click();
    await page.getByRole('heading', { name: 'What-if' }).waitFor();
    await page.getByRole('checkbox', { name: 'on-demand', exact: true }).check();
    await page.getByRole('checkbox', { name: 'spot-fallback', exact: true }).check();
    await page.getByRole('button', { name: 'Run' }).click();
    const comparison = page.getByRole('table', { name: 'Comparison' });
    await comparison.waitFor({ timeout: 120000 });
    check('a what-if run compares the scenarios side by side',
      (await comparison.getByRole('columnheader').allTextContents()).join(',') === ',on-demand,spot-fallback',
      await comparison.getByRole('columnheader').allTextContents());
    // A plot is an SVG image from a data URL, decoded after it is put in the page: wait for it.
    const plot = page.getByRole('img', { name: 'wait cdf' });
    check('with its plots', await plot.waitFor({ timeout: 30000 })
      .then(() => plot.evaluate((img) => img.decode().then(() => img.naturalWidth > 0)), () => false));

    // And one of the user's own beside a shipped one: a scenario file and its trace, uploaded.
    await page.getByRole('checkbox', { name: 'spot-fallback', exact: true }).uncheck();
    await page.getByLabel('Scenario (JSON)').setInputFiles({
      name: 'mine.json', mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({
        name: 'mine', fleet: 'fleet.json', shapes: ['a3-megagpu-8g'],
        workload: { format: 'csv', columns: { submit: 'submit', duration: 'duration', gpus: 'gpus' } },
        placement: [{ model: 'SPOT_THEN_ON_DEMAND' }] })) });
    await page.getByLabel('Its trace (CSV, SWF or JSONL)').setInputFiles({
      name: 'mine.csv', mimeType: 'text/csv',
      buffer: Buffer.from('submit,duration,gpus\n0,3600,8\n60,7200,16\n600,1800,8\n') });
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByRole('status').filter({ hasText: 'Done: on-demand vs mine' }).waitFor({ timeout: 120000 });
    check('an uploaded scenario is compared beside a shipped one',
      (await page.getByRole('table', { name: 'Comparison' }).getByRole('columnheader').allTextContents()).join(',') === ',on-demand,mine');

    // A phone's width: nothing scrolls sideways.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const small = await phone.newPage();
    watch(small, errors);
    await small.goto(`${BASE}/console/`);
    await small.getByRole('cell', { name: 'console-long' }).waitFor();
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    check('at 390 px the page does not scroll sideways', width <= 390, width);
    await small.goto(`${BASE}/console/#/job/demo/us-central1/${WAITING}`);
    await small.getByRole('heading', { name: 'console-waiting' }).waitFor();
    const detailWidth = await small.evaluate(() => document.documentElement.scrollWidth);
    check('nor does a job page', detailWidth <= 390, detailWidth);

    // With tokens on: the console asks for one, keeps it for the tab, and asks again when refused.
    const signed = await browser.newContext();
    const tokenPage = await signed.newPage();
    watch(tokenPage, errors, { refusals: true });
    await tokenPage.goto(`${TOKEN_BASE}/console/`);
    const dialog = tokenPage.getByRole('dialog', { name: 'Sign in with an API token' });
    await dialog.waitFor();
    check('a server with tokens brings up the token prompt', await dialog.isVisible());
    await tokenPage.getByRole('textbox', { name: 'API token' }).fill('ty1_1_not-a-real-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    await tokenPage.getByRole('button', { name: 'Sign in' }).click();
    // The prompt closes on submit and a refusal opens it again, emptied: an open dialog with the
    // refused token still in it was never sent.
    const tokenBox = tokenPage.getByRole('textbox', { name: 'API token' });
    check('a refused token brings the prompt back',
      await until('the prompt again', async () => (await dialog.isVisible()) && (await tokenBox.inputValue()) === '', 30)
        .then(() => true, () => false));
    await tokenBox.fill(TOKEN);
    await tokenPage.getByRole('button', { name: 'Sign in' }).click();
    await tokenPage.getByRole('cell', { name: 'console-token-job' }).waitFor();
    check('with the token the jobs show', true);
    check('a viewer is not offered the fleet', !(await tokenPage.getByRole('link', { name: 'Fleet' }).isVisible()));
    await tokenPage.getByRole('link', { name: process.env.TOKEN_JOB }).click();
    await tokenPage.getByRole('heading', { name: 'console-token-job' }).waitFor();
    await tokenPage.getByRole('heading', { name: 'Timeline' }).waitFor();
    check('a viewer sees no cancel or delete button',
      (await tokenPage.getByRole('button', { name: /Cancel job|Delete job/ }).count()) === 0);
    check('the token is kept for this tab only (sessionStorage)',
      await tokenPage.evaluate(() => sessionStorage.getItem('trainyard.token') !== null &&
        localStorage.getItem('trainyard.token') === null));

    check('no page threw a script error or logged one', errors.length === 0, errors);
  } finally {
    await browser.close();
  }
}

run(main);
