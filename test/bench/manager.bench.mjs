// The license manager page: its weight (the bytes a browser loads: index.html, app.js,
// style.css; raw and gzip-compressed), and its time to first render in Debian's chromium: from
// navigating to the start URL until the license list is on screen (the page's files, the token
// exchanged for a session, the live view's first event carrying the agent's list). Baseline: the
// same browser loading a page of one script that renders one heading, from a bare Node server
// on loopback: what any local page costs on this machine.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { startEmulator } from '@plugin-license/emulator';
import { generateCode, rpc, startReady } from './helpers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'packages', 'cli', 'bin', 'plugin-license.js');
const RUNS = 15;

function chromiumPath() {
  if (process.env.PLUGIN_LICENSE_CHROMIUM) return process.env.PLUGIN_LICENSE_CHROMIUM;
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run() {
  const { pageAssets } = await import(join(root, 'packages', 'cli', 'page', 'plugin.mjs'));
  const assets = await pageAssets();
  const raw = Object.values(assets).reduce((n, s) => n + Buffer.byteLength(s), 0);
  const gzip = Object.values(assets).reduce((n, s) => n + gzipSync(s).length, 0);
  const figures = [
    { name: 'manager page weight (html + js + css)', value: raw, unit: 'bytes' },
    { name: 'manager page weight, gzip', value: gzip, unit: 'bytes' },
  ];
  const browserPath = chromiumPath();
  if (!browserPath) {
    console.log('manager: no chromium; time to first render skipped');
    return figures;
  }
  const { chromium } = createRequire(join(root, 'packages', 'cli', 'package.json'))('playwright-core');
  const home = mkdtempSync(join(tmpdir(), 'plm-bench-'));
  const env = { HOME: home, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: join(home, 'agent.sock') };
  let emulator;
  let agent;
  let baselineServer;
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
  try {
    emulator = await startEmulator({ rateLimits: { activation: 100_000, general: 100_000, builds: 100_000 } });
    env.PLUGIN_LICENSE_BASE_URL = emulator.baseUrl;
    agent = startReady(process.execPath, [cli, 'agent', 'run'], env);
    await agent.ready;
    const activated = await rpc(env.PLUGIN_LICENSE_SOCKET, 'activate', { project_id: emulator.projectId, code: await generateCode(emulator) });
    if (activated.error) throw new Error(`activate: ${activated.error.message}`);

    baselineServer = createServer((req, res) => {
      if (req.url === '/app.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end("document.body.innerHTML = '<h2>Your licenses</h2>';");
      } else {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><head><script src="/app.js" defer></script></head><body></body></html>');
      }
    });
    await new Promise((resolve) => baselineServer.listen(0, '127.0.0.1', resolve));
    const baselineUrl = `http://127.0.0.1:${baselineServer.address().port}/`;

    const time = async (url, ready) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(url);
      await ready(page);
      const ms = performance.now() - started;
      await context.close();
      return ms;
    };
    const baseline = [];
    const manager = [];
    for (let i = 0; i < RUNS + 2; i++) {
      // Each start URL works once: a manager per run (its start is not timed).
      const m = startReady(process.execPath, [cli, 'manager', '--no-open'], env, /"url"/);
      let url;
      m.child.stdout.on('data', (d) => (url ??= JSON.parse(String(d).split('\n')[0]).url));
      await m.ready;
      const b = await time(baselineUrl, (page) => page.getByRole('heading', { name: 'Your licenses' }).waitFor());
      const t = await time(url, (page) => page.getByText('Licensed on this computer.').waitFor());
      await m.stop();
      // The first two warm the browser's caches of its own code.
      if (i >= 2) {
        baseline.push(b);
        manager.push(t);
      }
    }
    const value = median(manager);
    const base = median(baseline);
    figures.push({ name: 'manager time to first render (median)', value, unit: 'ms', baseline: base, ratio: value / base });
    return figures;
  } finally {
    await browser.close();
    baselineServer?.close();
    await agent?.stop();
    await emulator?.close();
    rmSync(home, { recursive: true, force: true });
  }
}
