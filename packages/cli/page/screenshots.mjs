#!/usr/bin/env node
// The README's screenshots of the license manager, in each state, made by the real parts: the
// emulator, an agent, the manager, Debian's chromium. Run after `pnpm build`:
//   node packages/cli/page/screenshots.mjs
// Writes packages/cli/page/screenshots/*.png. Not a test: the tests check the same states.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');
const { startEmulator } = await import(join(root, 'packages/emulator/dist/index.js'));
const out = join(here, 'screenshots');
mkdirSync(out, { recursive: true });

const PROJECT = '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84';
const emulator = await startEmulator({ projectId: PROJECT });
const generate = async (max = 2) => {
  const res = await fetch(`${emulator.baseUrl}/plugin-activation/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: PROJECT, max_activations: max }),
  });
  return (await res.json()).code;
};
const stops = [];

function started(args, env, ready) {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  stops.push(() => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const line = text.split('\n').find((l) => ready.test(l));
      if (line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
}

async function computer(name, baseUrl = emulator.baseUrl) {
  const home = mkdtempSync(join(tmpdir(), `plm-shots-${name}-`));
  stops.push(() => rmSync(home, { recursive: true, force: true }));
  const env = { HOME: home, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: join(home, 'agent.sock'), PLUGIN_LICENSE_BASE_URL: baseUrl, PLUGIN_LICENSE_APP: 'acme-audio' };
  const agent = () => started([join(root, 'packages/cli/bin/plugin-license.js'), 'agent', 'run'], env, /"ready"/);
  const manager = await started([join(root, 'packages/cli/bin/plugin-license.js'), 'manager', '--no-open', '--project', `${PROJECT}=Acme Reverb`], env, /"url"/);
  return { env, agent, url: manager.url };
}

const browser = await chromium.launch({ executablePath: process.env.PLUGIN_LICENSE_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const shot = async (page, file, target) => {
  await page.waitForTimeout(150); // the fonts and the last render settle
  if (target) await target.screenshot({ path: join(out, file) });
  else await page.screenshot({ path: join(out, file) });
  console.log(`wrote ${file}`);
};
const viewport = { width: 880, height: 760 };

try {
  // 1. The agent is not running.
  const home = await computer('home');
  let context = await browser.newContext({ viewport, acceptDownloads: true });
  let page = await context.newPage();
  await page.goto(home.url);
  await page.getByText('The license agent is not running').waitFor();
  await shot(page, 'agent-not-running.png');

  // 2. It runs: nothing activated yet, the Activate form (the page updates by itself).
  await home.agent();
  await page.getByRole('button', { name: 'Activate' }).waitFor({ timeout: 10_000 });
  await shot(page, 'not-activated.png');

  // 3. A refused code, in the CLI's words.
  const revoked = await generate(1);
  await fetch(`${emulator.origin}/__emulator/codes/${revoked}/revoke`, { method: 'POST' });
  await page.getByRole('textbox', { name: 'Activation code' }).first().fill(revoked);
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('alert').waitFor();
  await shot(page, 'refused-code.png', page.getByRole('region', { name: 'Activate Acme Reverb' }));

  // 4. Activated.
  const code = await generate(2);
  await page.getByRole('textbox', { name: 'Activation code' }).first().fill(code);
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByText('Licensed on this computer.').waitFor();
  await shot(page, 'licensed.png');

  // 5. Move to another computer: the confirmation.
  await page.getByRole('button', { name: 'Move to another computer…' }).click();
  await page.getByRole('dialog').waitFor();
  await shot(page, 'move-confirmation.png');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // 6. The support report.
  await page.getByRole('button', { name: 'Make the report' }).click();
  await page.locator('pre.report').waitFor({ timeout: 20_000 });
  await shot(page, 'support-report.png', page.getByRole('region', { name: 'Support report' }));

  // 7. Revoked, pushed to the open page.
  await fetch(`${emulator.origin}/__emulator/codes/${code}/revoke`, { method: 'POST' });
  await page.getByRole('article', { name: 'Acme Reverb' }).getByRole('button', { name: 'Check now' }).click();
  await page.getByText('This license was revoked.').first().waitFor();
  await shot(page, 'revoked.png', page.getByRole('region', { name: 'Your licenses' }));

  // 8. The offline steps, and an offline computer licensed by a response file.
  const studio = await computer('studio', 'http://127.0.0.1:9/functions/v1');
  await studio.agent();
  const studioContext = await browser.newContext({ viewport, acceptDownloads: true });
  const studioPage = await studioContext.newPage();
  await studioPage.goto(studio.url);
  const offlineCode = await generate(2);
  await studioPage.locator('#offline-code').fill(offlineCode);
  const requestDownload = studioPage.waitForEvent('download');
  await studioPage.getByRole('button', { name: 'Download the request file' }).click();
  const request = await requestDownload;
  const requestFile = join(mkdtempSync(join(tmpdir(), 'plm-usb-')), request.suggestedFilename());
  await request.saveAs(requestFile);
  await studioPage.getByText('Carry it to a computer that is online').waitFor();
  await shot(studioPage, 'offline-steps.png', studioPage.getByRole('region', { name: 'Activate a computer that is never online' }));
  await page.getByLabel('Request file').setInputFiles(requestFile);
  const responseDownload = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Answer and download the response file' }).click();
  const response = await responseDownload;
  const responseFile = join(dirname(requestFile), response.suggestedFilename());
  await response.saveAs(responseFile);
  await studioPage.getByLabel('Response file').setInputFiles(responseFile);
  await studioPage.getByRole('button', { name: 'Import the response' }).click();
  await studioPage.getByText('offline activation file').waitFor();
  await studioPage.evaluate('window.scrollTo(0, 0)');
  await shot(studioPage, 'offline-licensed.png');
  await studioContext.close();

  // 9. Dark mode.
  const dark = await browser.newContext({ viewport, colorScheme: 'dark' });
  const darkHome = await computer('dark');
  await darkHome.agent();
  const darkPage = await dark.newPage();
  await darkPage.goto(darkHome.url);
  await darkPage.getByRole('button', { name: 'Activate' }).waitFor();
  await shot(darkPage, 'dark.png');
  await dark.close();

  // 10. A link used twice.
  context = await browser.newContext({ viewport });
  page = await context.newPage();
  await page.goto(home.url);
  await page.getByRole('alert').waitFor();
  await shot(page, 'link-used.png');
} finally {
  await browser.close();
  for (const stop of stops.reverse()) stop();
  await emulator.close();
}
