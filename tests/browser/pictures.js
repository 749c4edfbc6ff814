// Screenshots of the console for README.md and docs/console.md (scripts/console_pictures.sh): the
// jobs page and one waiting job's page, at a laptop's width in light and dark, and at a phone's.
// Environment: BASE, OUT (a directory), WAITING and RUNNING (job ids).
'use strict';

const { chromium } = require('playwright-core');

async function main() {
  const { BASE, OUT, WAITING, RUNNING } = process.env;
  const args = ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args });
  const shots = [
    ['jobs', '', { width: 1280, height: 640 }, 'light'],
    ['job-waiting', `#/job/demo/us-central1/${WAITING}`, { width: 1280, height: 900 }, 'light'],
    ['job-running-dark', `#/job/demo/us-central1/${RUNNING}`, { width: 1280, height: 1000 }, 'dark'],
    ['jobs-phone', '', { width: 390, height: 844 }, 'light'],
  ];
  for (const [name, hash, viewport, colorScheme] of shots) {
    const context = await browser.newContext({ viewport, colorScheme });
    const page = await context.newPage();
    await page.goto(`${BASE}/console/${hash}`);
    await page.getByRole('heading').first().waitFor();
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: `${OUT}/${name}.png` });
    await context.close();
  }
  // What-if: two shipped scenarios compared on the server.
  const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } });
  const page = await context.newPage();
  await page.goto(`${BASE}/console/#/whatif`);
  await page.getByRole('checkbox', { name: 'on-demand' }).check();
  await page.getByRole('checkbox', { name: 'spot-fallback' }).check();
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('table', { name: 'Comparison' }).waitFor({ timeout: 120000 });
  await page.screenshot({ path: `${OUT}/whatif.png` });
  await browser.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
