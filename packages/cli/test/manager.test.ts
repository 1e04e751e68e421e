import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentRpc, makeVendorKey, startAgent, startRelayProcess, tempHome, type RunningAgent } from '@plugin-license/test-utils';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cli, envFor, useCliService } from './helpers.js';
import { openInBrowser } from '../src/manager/open.js';
import { axeSource, bearer, chromiumPath, notTheSession, raw, session, startManager, type Manager, type RawAnswer } from './manager-helpers.js';

// The license manager in a real browser (Debian's chromium through playwright-core), against the
// emulator and a real agent. CI installs chromium and sets PLUGIN_LICENSE_REQUIRE_BROWSER=1, so
// there a missing browser fails instead of skipping.
const browserPath = chromiumPath();
const required = process.env.PLUGIN_LICENSE_REQUIRE_BROWSER === '1';

describe.skipIf(browserPath === undefined)('the license manager page', () => {
  const { service, home } = useCliService();
  let browser: Browser;
  const cleanups: Array<() => Promise<unknown>> = [];
  const later = <T>(thing: T, stop: (t: T) => Promise<unknown>): T => {
    cleanups.push(() => stop(thing));
    return thing;
  };

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });
  let homes = 0;
  afterEach(async () => {
    homes = 0;
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  /** A home with a running agent and a manager, as a musician's computer has them. */
  async function computer(options: { agent?: boolean; baseUrl?: string; args?: string[]; dir?: string; products?: string[]; agentEnv?: Record<string, string> } = {}): Promise<{ dir: string; env: Record<string, string>; agent?: RunningAgent; manager: Manager }> {
    // The first computer of a test is the test's home; a second one gets its own.
    const dir = options.dir ?? (homes++ === 0 ? home() : later(tempHome('plc-'), async (h) => h.cleanup()).dir);
    const baseUrl = options.baseUrl ?? service.emulator.baseUrl;
    const env = envFor(service, dir, { PLUGIN_LICENSE_BASE_URL: baseUrl });
    const agent = options.agent === false ? undefined : later(await startAgent({ socket: env.PLUGIN_LICENSE_SOCKET as string, baseUrl, home: dir, ...(options.agentEnv ? { env: options.agentEnv } : {}) }), (a) => a.stop('keep-home'));
    const manager = later(await startManager(env, ['--no-open', ...(options.products ?? ['--project', `${service.emulator.projectId}=Acme Reverb`]), ...(options.args ?? [])]), (m) => m.stop());
    return { dir, env, ...(agent ? { agent } : {}), manager };
  }

  async function open(m: Manager, context?: BrowserContext): Promise<Page> {
    const ctx = context ?? later(await browser.newContext({ acceptDownloads: true }), (c) => c.close());
    const page = await ctx.newPage();
    await page.goto(m.url);
    await page.getByRole('heading', { name: 'Your licenses' }).waitFor();
    return page;
  }

  const card = (page: Page) => page.getByRole('article', { name: 'Acme Reverb' });

  async function seriousViolations(page: Page): Promise<unknown[]> {
    await page.evaluate(axeSource());
    const result = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as { violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> };
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target) }));
  }

  it('activates with the keyboard alone, takes the token out of the address bar, and passes axe-core', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    const page = await open(manager);
    expect(page.url()).toBe(`${manager.origin}/`);
    expect(await seriousViolations(page)).toEqual([]);

    // Tab until the field named "Activation code" has the focus, type, Enter.
    const focused = (): Promise<unknown> => page.evaluate('document.activeElement && document.activeElement.id');
    for (let i = 0; i < 20 && (await focused()) !== 'activate-code'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('activate-code');
    expect(await page.getByRole('textbox', { name: 'Activation code' }).first().getAttribute('id')).toBe('activate-code');
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');

    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Activated: Acme Reverb is licensed on this computer/);
    await expect.poll(() => card(page).textContent()).toMatch(/Licensed on this computer/);
    const text = (await card(page).textContent()) ?? '';
    expect(text).toContain(`${code.slice(0, 4)}…${code.slice(-4)}`);
    expect(text).not.toContain(code);
    expect(text).toMatch(/Last online check\s*now|minute/);
    expect(text).toMatch(/Works offline until/);
    expect(await page.getByRole('textbox', { name: 'Activation code' }).first().inputValue()).toBe('');
    expect((await service.admin.activation.status(code)).activations).toBe(1);
    const state = (await agentRpc(agent!.socket, 'check', { project_id: service.emulator.projectId })).result as { valid: boolean };
    expect(state.valid).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    // Nothing secret in what the manager logged.
    expect(manager.stderr()).not.toContain(code);
    expect(manager.stderr()).not.toContain(manager.token);
  });

  it("says 'signed by the vendor until DATE' for a license the vendor's relay signed", async () => {
    const code = await service.code(2);
    const key = makeVendorKey();
    const relay = later(await startRelayProcess({ serviceUrl: service.emulator.baseUrl, token: service.emulator.token, app: 'plugin-license', projects: [service.emulator.projectId], keys: [key] }), (r) => r.stop());
    const { manager, agent } = await computer({ agentEnv: { PLUGIN_LICENSE_RELAY_URL: relay.baseUrl, PLUGIN_LICENSE_TICKET_KEYS: key.publicKey } });
    const page = await open(manager);
    const state = (await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code })).result as { valid: boolean; signed_ticket: string };
    expect(state.valid).toBe(true);
    const until = new Date((JSON.parse(state.signed_ticket.split('\n')[0]!) as { valid_until: number }).valid_until * 1000);
    await expect.poll(() => card(page).textContent()).toMatch(/Signed by the vendor until/);
    expect(await card(page).locator('time').first().getAttribute('datetime')).toBe(until.toISOString());
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('says a refused code in the CLI\'s words (revoked, no slots left, the service unreachable) and keeps it in the field', async () => {
    const { manager } = await computer();
    const page = await open(manager);
    const field = page.getByRole('textbox', { name: 'Activation code' }).first();
    const refused = async (code: string, words: RegExp): Promise<void> => {
      await field.fill(code);
      await page.getByRole('button', { name: 'Activate' }).click();
      const alert = page.getByRole('region', { name: 'Activate Acme Reverb' }).getByRole('alert');
      await expect.poll(() => alert.textContent(), { timeout: 20_000 }).toMatch(words);
      expect(await alert.textContent()).not.toContain(code);
      expect(await field.inputValue()).toBe(code);
    };
    const revoked = await service.code(1);
    await service.control.revoke(revoked);
    await refused(revoked, new RegExp(`${revoked.slice(0, 4)}…${revoked.slice(-4)} has been revoked; contact the vendor for a new code`));

    const full = await service.code(1);
    await service.admin.activation.activate({ code: full, machine_id: 'm-another-computer', plugin_id: service.emulator.projectId });
    await refused(full, /already active on as many machines as it allows \(1 of 1 slots in use\); deactivate it on a machine you no longer use, then try again/);

    const fresh = await service.code(1);
    await service.control.faults({ mode: 'offline' });
    try {
      await refused(fresh, /activate: .*(reach|connect|network|unavailable|refused)/i);
    } finally {
      await service.control.faults({ mode: 'none' });
    }
  });

  it('shows a revocation pushed by the agent without a reload', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    const activated = await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code });
    expect(activated.error).toBeUndefined();
    const page = await open(manager);
    await expect.poll(() => card(page).textContent()).toMatch(/Licensed on this computer/);
    let reloaded = false;
    page.on('framenavigated', () => (reloaded = true));
    await service.control.revoke(code);
    // Another client (a plugin's "Check now") makes the agent ask the service; the page hears it.
    await agentRpc(agent!.socket, 'refresh', { project_id: service.emulator.projectId });
    await expect.poll(() => card(page).textContent()).toMatch(/This license was revoked/);
    expect(reloaded).toBe(false);
  });

  it('names every plugin, offers for activation only those not licensed here (a licensed one shows its license), and a revoked one again', async () => {
    // A second plugin of the vendor (another project id), named as the first.
    const gain = '2bfd7a59-0b7d-4e55-9a10-77c2d4e8b601';
    const { manager, agent } = await computer({ products: ['--project', `${service.emulator.projectId}=Acme Reverb`, '--project', `${gain}=Acme Gain`] });
    const code = await service.code(2);
    const page = await open(manager);
    const form = (name: string) => page.getByRole('region', { name });
    const offered = (name: string) => form(name).getByRole('combobox', { name: 'Plugin' }).locator('option').allTextContents();

    // Nothing licensed: both offered by name; no project id asked for; nothing called "Plugin 2bfd7a59".
    expect(await offered('Activate a license')).toEqual(['Acme Reverb', 'Acme Gain']);
    expect(await page.getByRole('textbox', { name: 'Project id' }).count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toMatch(/Plugin [0-9a-f]{8}/);
    expect(await page.getByText('Not activated here yet: Acme Reverb, Acme Gain.').count()).toBe(1);

    await form('Activate a license').getByRole('combobox', { name: 'Plugin' }).selectOption({ label: 'Acme Reverb' });
    await form('Activate a license').getByRole('textbox', { name: 'Activation code' }).fill(code);
    await form('Activate a license').getByRole('button', { name: 'Activate' }).click();
    await expect.poll(() => card(page).textContent()).toMatch(/Licensed on this computer/);

    // Acme Reverb is licensed: its card shows the license; the form offers Acme Gain alone, by name.
    await expect.poll(() => page.getByRole('heading', { name: 'Activate Acme Gain' }).count()).toBe(1);
    expect(await form('Activate Acme Gain').getByRole('status').textContent()).toMatch(/Activated: Acme Reverb is licensed on this computer/);
    expect(await form('Activate Acme Gain').getByRole('combobox').count()).toBe(0);
    expect(await form('Activate Acme Gain').getByRole('textbox', { name: 'Project id' }).count()).toBe(0);
    expect(await page.getByText(/Activate Acme Reverb/).count()).toBe(0);
    expect(await card(page).textContent()).toContain(`${code.slice(0, 4)}…${code.slice(-4)}`);
    expect(await seriousViolations(page)).toEqual([]);

    // The form acts for Acme Gain: a code of another project is refused by the service for it.
    const other = await service.code(1);
    await form('Activate Acme Gain').getByRole('textbox', { name: 'Activation code' }).fill(other);
    await form('Activate Acme Gain').getByRole('button', { name: 'Activate' }).click();
    await expect.poll(() => form('Activate Acme Gain').getByRole('alert').count(), { timeout: 20_000 }).toBe(1);
    expect((await service.admin.activation.status(other)).activations).toBe(0);
    expect((await agentRpc(agent!.socket, 'check', { project_id: gain })).result).toMatchObject({ valid: false });

    // Revoked: not valid any more, so offered again beside Acme Gain, without a reload.
    await service.control.revoke(code);
    await agentRpc(agent!.socket, 'refresh', { project_id: service.emulator.projectId });
    await expect.poll(() => card(page).textContent()).toMatch(/This license was revoked/);
    await expect.poll(() => form('Activate a license').count()).toBe(1);
    expect(await offered('Activate a license')).toEqual(['Acme Reverb', 'Acme Gain']);
  });

  it('with every plugin licensed, offers nothing to activate and keeps what it said; with no plugin named, asks for the project id', async () => {
    const { manager } = await computer();
    const code = await service.code(2);
    const page = await open(manager);
    await page.getByRole('region', { name: 'Activate Acme Reverb' }).getByRole('textbox', { name: 'Activation code' }).fill(code);
    await page.getByRole('region', { name: 'Activate Acme Reverb' }).getByRole('button', { name: 'Activate' }).click();
    const done = page.getByRole('region', { name: 'Activation' });
    await expect.poll(() => done.textContent()).toMatch(/Acme Reverb is licensed on this computer: nothing to activate\..*Activated: Acme Reverb is licensed on this computer\./);
    expect(await done.getByRole('textbox').count()).toBe(0);
    expect(await page.getByRole('heading', { name: /^Activate (Acme|a license|the plugin)/ }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    // A build that names no plugin (and no --project): the project id field, in words.
    const unnamed = await computer({ products: [] });
    const bare = await open(unnamed.manager);
    const form = bare.getByRole('region', { name: 'Activate a license' });
    expect(await form.getByRole('textbox', { name: 'Project id' }).count()).toBe(1);
    expect(await form.textContent()).toMatch(/The plugin's project id, from your purchase email or the vendor\./);
  });

  it('moves a license to another computer after a confirmation that says a slot is freed', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code });
    expect((await service.admin.activation.status(code)).activations).toBe(1);
    const page = await open(manager);
    await card(page).getByRole('button', { name: 'Move to another computer…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/slot of code .* is freed/);
    expect(await seriousViolations(page)).toEqual([]);
    // Cancel changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await service.admin.activation.status(code)).activations).toBe(1);
    await card(page).getByRole('button', { name: 'Move to another computer…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: "Release this computer's slot" }).click();
    await expect.poll(() => card(page).getByRole('status').textContent()).toMatch(/Released: a slot of this code is free for another computer/);
    expect(await card(page).textContent()).toMatch(/Not activated on this computer/);
    expect((await service.admin.activation.status(code)).activations).toBe(0);
  });

  it('checks now through the agent', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code });
    const page = await open(manager);
    await card(page).getByRole('button', { name: 'Check now' }).click();
    await expect.poll(() => card(page).getByRole('status').textContent()).toMatch(/Checked: licensed/);
  });

  it('activates an offline computer by carrying real files between two pages', async () => {
    const online = await computer();
    // The studio: its service is unreachable (nothing listens on port 9 of loopback).
    const studio = await computer({ baseUrl: 'http://127.0.0.1:9/functions/v1' });
    const code = await service.code(2);
    const carry = join(home(), 'usb-stick');
    mkdirSync(carry);

    // The request carries no code: it is given on the online computer (step 2).
    const studioPage = await open(studio.manager);
    const requestDownload = studioPage.waitForEvent('download');
    await studioPage.getByRole('button', { name: 'Download the request file' }).click();
    const request = await requestDownload;
    const requestFile = join(carry, request.suggestedFilename());
    await request.saveAs(requestFile);
    expect(request.suggestedFilename()).toMatch(/^plugin-license-request-[0-9a-f]{8}\.txt$/);
    expect(readFileSync(requestFile, 'utf8')).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/);

    const onlinePage = await open(online.manager);
    await onlinePage.getByLabel('Request file').setInputFiles(requestFile);
    await onlinePage.getByRole('button', { name: 'Answer and download the response file' }).click();
    await expect.poll(() => onlinePage.getByRole('region', { name: 'Activate a computer that is never online' }).getByRole('alert').textContent()).toMatch(/The request carries no code; give the code to activate/);
    await onlinePage.getByLabel('Request file').setInputFiles(requestFile);
    await onlinePage.getByLabel('Activation code, when the request has none').fill(code);
    const responseDownload = onlinePage.waitForEvent('download');
    await onlinePage.getByRole('button', { name: 'Answer and download the response file' }).click();
    const response = await responseDownload;
    const responseFile = join(carry, response.suggestedFilename());
    await response.saveAs(responseFile);
    await expect.poll(() => onlinePage.getByRole('status').last().textContent()).toMatch(/activated code .* valid until/);
    expect((await service.admin.activation.status(code)).activations).toBe(1);

    await studioPage.getByLabel('Response file').setInputFiles(responseFile);
    await studioPage.getByRole('button', { name: 'Import the response' }).click();
    await expect.poll(() => card(studioPage).textContent()).toMatch(/Licensed on this computer/);
    expect(await card(studioPage).textContent()).toMatch(/offline activation file/);
    const state = (await agentRpc(studio.agent!.socket, 'check', { project_id: service.emulator.projectId })).result as { valid: boolean; source: string };
    expect(state).toMatchObject({ valid: true, source: 'offline' });

    // A file far larger than any offline document is refused before it is read.
    writeFileSync(join(carry, 'video.mov'), Buffer.alloc(200 * 1024));
    await studioPage.getByLabel('Response file').setInputFiles(join(carry, 'video.mov'));
    await studioPage.getByRole('button', { name: 'Import the response' }).click();
    await expect.poll(() => studioPage.getByRole('alert').textContent()).toMatch(/video\.mov is far larger than an offline response file: choose the offline response file/);
    // A file that is not a response is said so, in the CLI's words.
    writeFileSync(join(carry, 'notes.txt'), 'shopping list\n');
    await studioPage.getByLabel('Response file').setInputFiles(join(carry, 'notes.txt'));
    await studioPage.getByRole('button', { name: 'Import the response' }).click();
    await expect.poll(() => studioPage.getByRole('alert').textContent()).toMatch(/offline/i);

    // Moving it: the studio forgets the license and gives a proof; the online computer frees the slot.
    await card(studioPage).getByRole('button', { name: 'Move to another computer…' }).click();
    expect(await studioPage.getByRole('dialog').textContent()).toMatch(/release proof file/);
    const proofDownload = studioPage.waitForEvent('download');
    await studioPage.getByRole('dialog').getByRole('button', { name: 'Release and download the proof' }).click();
    const proof = await proofDownload;
    const proofFile = join(carry, proof.suggestedFilename());
    await proof.saveAs(proofFile);
    expect(proof.suggestedFilename()).toMatch(/^plugin-license-release-[0-9a-f]{8}\.txt$/);
    await expect.poll(() => card(studioPage).textContent()).toMatch(/Not activated on this computer/);
    // A lost download is saved again from the page.
    const again = studioPage.waitForEvent('download');
    await card(studioPage).getByRole('button', { name: 'Save the release proof again' }).click();
    const againFile = join(carry, `again-${(await again).suggestedFilename()}`);
    await (await again).saveAs(againFile);
    expect(readFileSync(againFile, 'utf8')).toBe(readFileSync(proofFile, 'utf8'));
    expect((await agentRpc(studio.agent!.socket, 'check', { project_id: service.emulator.projectId })).result).toMatchObject({ valid: false });
    expect((await service.admin.activation.status(code)).activations).toBe(1);

    await onlinePage.getByLabel('Release proof file').setInputFiles(proofFile);
    await onlinePage.getByRole('button', { name: 'Confirm the release' }).click();
    await expect.poll(() => onlinePage.getByRole('status').last().textContent()).toMatch(/Released: a slot of code .* is free \(0 of 2 in use\)/);
    expect((await service.admin.activation.status(code)).activations).toBe(0);
  });

  it('makes the support report, masked, and copies it', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code });
    const context = later(await browser.newContext(), (c) => c.close());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: manager.origin });
    const page = await open(manager, context);
    await page.getByRole('button', { name: 'Make the report' }).click();
    const report = page.locator('pre.report');
    await expect.poll(() => report.textContent(), { timeout: 20_000 }).toMatch(/machine id/);
    const text = (await report.textContent()) ?? '';
    expect(text).toMatch(/agent/);
    expect(text).toContain(service.emulator.projectId);
    expect(text).not.toContain(code);
    expect(text).not.toContain(service.emulator.token);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(text);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('says when the agent is not running and how to start it, then updates by itself once it runs', async () => {
    const { manager, env, dir } = await computer({ agent: false });
    const page = await open(manager);
    const notice = page.getByRole('alert');
    await expect.poll(() => notice.textContent()).toMatch(/The license agent is not running on this computer/);
    expect(await notice.textContent()).toMatch(/agent run/);
    expect(await seriousViolations(page)).toEqual([]);
    later(await startAgent({ socket: env.PLUGIN_LICENSE_SOCKET as string, baseUrl: service.emulator.baseUrl, home: dir }), (a) => a.stop('keep-home'));
    await expect.poll(() => page.getByText('No license is activated on this computer yet.').count()).toBe(1);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('refuses a wrong Host, a foreign Origin, a request without the session header, and a replayed token; sends no CORS headers and no cookie', async () => {
    const { manager } = await computer();
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ project_id: service.emulator.projectId });

    // DNS rebinding: another name that points at 127.0.0.1.
    for (const path of ['/', '/app.js', '/api/events']) {
      const r = await raw(manager.port, 'GET', path, { host: `evil.example:${manager.port}` });
      expect(r.status, path).toBe(421);
    }
    expect((await raw(manager.port, 'GET', '/', { host: `localhost:${manager.port}` })).status).toBe(200);
    expect((await raw(manager.port, 'GET', '/', { host: `127.0.0.1:${manager.port + 1}` })).status).toBe(421);

    // No session header: nothing but the page's files.
    expect((await raw(manager.port, 'GET', '/api/events')).status).toBe(401);
    expect((await raw(manager.port, 'POST', '/api/refresh', { origin: manager.origin, ...json }, body)).status).toBe(401);
    const page = await raw(manager.port, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-inline/);
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);

    const s = await session(manager);
    const auth = bearer(s);
    expect((await raw(manager.port, 'GET', '/api/events', auth)).status).toBe(200);
    // A forged session is no session.
    expect((await raw(manager.port, 'GET', '/api/events', bearer('A'.repeat(s.length)))).status).toBe(401);

    // CSRF: the session alone does not make a change.
    for (const origin of [undefined, 'http://evil.example', `http://127.0.0.1:${manager.port + 1}`, 'null']) {
      const r = await raw(manager.port, 'POST', '/api/refresh', { ...auth, ...json, ...(origin ? { origin } : {}) }, body);
      expect(r.status, String(origin)).toBe(403);
    }
    // A body without what the action needs, or with a malformed value: 400, in words.
    for (const [action, sent, words] of [
      ['activate', {}, /the project id is missing/],
      ['activate', { project_id: service.emulator.projectId }, /the activation code is missing/],
      ['activate', { project_id: 'acme', code: 'x' }, /project id 'acme' is not a UUID/],
      ['offline_import', { document: 'not an offline document' }, /offline/],
      ['refresh', { project_id: 42 }, /the project id is missing/],
    ] as const) {
      const r = await raw(manager.port, 'POST', `/api/${action}`, { ...auth, origin: manager.origin, ...json }, JSON.stringify(sent));
      expect(r.status, `${action} ${JSON.stringify(sent)}`).toBe(400);
      expect(JSON.parse(r.body).error.message).toMatch(words);
    }
    // A read by another site, as the browser says it.
    for (const site of ['cross-site', 'same-site']) expect((await raw(manager.port, 'GET', '/api/events', { ...auth, 'sec-fetch-site': site })).status, site).toBe(403);

    // The token works once.
    const again = await raw(manager.port, 'POST', '/api/session', { origin: manager.origin, ...json }, JSON.stringify({ token: manager.token }));
    expect(again.status).toBe(403);
    expect(JSON.parse(again.body).error.code).toBe('token_used');
    const wrong = await raw(manager.port, 'POST', '/api/session', { origin: manager.origin, ...json }, JSON.stringify({ token: 'x'.repeat(43) }));
    expect(wrong.status).toBe(403);

    // No CORS, ever: not on a preflight, not on an answer.
    const preflight = await raw(manager.port, 'OPTIONS', '/api/activate', { origin: 'http://evil.example', 'access-control-request-method': 'POST' });
    expect(preflight.status).toBe(405);
    const preflightWithHeader = await raw(manager.port, 'OPTIONS', '/api/deactivate', { origin: `http://127.0.0.1:${manager.port + 1}`, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' });
    expect(preflightWithHeader.status).toBe(405);
    for (const r of [preflight, preflightWithHeader, page, again]) {
      expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
      expect(r.headers['set-cookie']).toBeUndefined();
    }

    // A replayed link in a browser: the page says so.
    const second = await browser.newContext();
    later(second, (c) => c.close());
    const replay = await second.newPage();
    await replay.goto(manager.url);
    await expect.poll(() => replay.getByRole('alert').textContent()).toMatch(/This link was already used: open the license manager again/);
    expect(await second.cookies()).toEqual([]);
  });

  it('refuses every API route, the live view included, without the page\'s session header (missing, wrong, forged, in a cookie or the query), and frees no slot', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code });
    const s = await session(manager);
    const body: Record<string, unknown> = { project_id: service.emulator.projectId, code, document: 'x' };
    const routes = ['activate', 'deactivate', 'refresh', 'offline_request', 'offline_import', 'offline_answer', 'offline_release', 'offline_confirm', 'report', 'session-less-name'];
    for (const [label, headers, query] of notTheSession(s, manager.token)) {
      for (const route of routes) {
        // A forged Host and Origin: everything a request from elsewhere can make up, but the session.
        const r = await raw(manager.port, 'POST', `/api/${route}${query}`, { ...headers, host: `127.0.0.1:${manager.port}`, origin: manager.origin, 'content-type': 'application/json' }, JSON.stringify(body));
        expect(r.status, `${label}: ${route}`).toBe(401);
        expect(r.headers['set-cookie']).toBeUndefined();
      }
      const stream = await raw(manager.port, 'GET', `/api/events${query}`, headers);
      expect(stream.status, `${label}: events`).toBe(401);
      expect(stream.body).not.toMatch(/licenses/);
    }
    expect((await service.admin.activation.status(code)).activations).toBe(1);
    expect(((await agentRpc(agent!.socket, 'check', { project_id: service.emulator.projectId })).result as { valid: boolean }).valid).toBe(true);
    // The real session still works: it was the header that was missing, not the manager.
    expect((await raw(manager.port, 'GET', '/api/events', bearer(s))).status).toBe(200);
    expect(manager.stderr()).not.toContain(s);
  });

  it('keeps the session in the tab: a reload keeps it, a second tab on the bare address has none, and no cookie is ever set', async () => {
    const { manager } = await computer();
    const context = later(await browser.newContext(), (c) => c.close());
    const seen: Array<{ url: string; setCookie: string | undefined }> = [];
    context.on('response', (r) => void r.allHeaders().then((h) => seen.push({ url: r.url(), setCookie: h['set-cookie'] })));
    const page = await open(manager, context);
    const s = (await page.evaluate("sessionStorage.getItem('plugin-license-session')")) as string;
    expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);

    await page.reload();
    await page.getByRole('heading', { name: 'Your licenses' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(page.url()).toBe(`${manager.origin}/`);

    const bare = await context.newPage();
    await bare.goto(`${manager.origin}/`);
    await expect.poll(() => bare.getByRole('alert').textContent()).toMatch(/This page has no session with the license manager: open it again from your plugin or installer/);
    expect(await bare.getByRole('heading', { name: 'Your licenses' }).count()).toBe(0);
    expect(await bare.evaluate("sessionStorage.getItem('plugin-license-session')")).toBeNull();

    expect(await context.cookies()).toEqual([]);
    await expect.poll(() => seen.length).toBeGreaterThan(5);
    expect(seen.filter((r) => r.setCookie !== undefined)).toEqual([]);
    expect(seen.map((r) => r.url).join(' ')).not.toContain(s);
    expect(manager.stderr()).not.toContain(s);
  });

  it('a server on another loopback port, visited in the same browser, receives nothing it can use, and its page cannot act', async () => {
    const { manager, agent } = await computer();
    const code = await service.code(2);
    await agentRpc(agent!.socket, 'activate', { project_id: service.emulator.projectId, code });
    const slots = async (): Promise<number> => (await service.admin.activation.status(code)).activations;
    expect(await slots()).toBe(1);

    // The other server records every request; its page tries what a hostile page can.
    const received: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
    const target = JSON.stringify({ origin: manager.origin, project: service.emulator.projectId });
    const hostile = `<!doctype html><title>elsewhere</title><script>
      const { origin, project } = ${target};
      const body = JSON.stringify({ project_id: project });
      const tried = {};
      const attempt = async (name, url, init) => {
        try { const r = await fetch(url, init); tried[name] = 'answered ' + r.status + ' ' + r.type; } catch (e) { tried[name] = 'failed: ' + e.name; }
      };
      (async () => {
        await attempt('simple post, no-cors', origin + '/api/deactivate', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body });
        await attempt('json post with a guessed session', origin + '/api/deactivate', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json', authorization: 'Bearer guessed' }, body });
        await attempt('the live view', origin + '/api/events', { credentials: 'include' });
        try { tried.storage = String(sessionStorage.getItem('plugin-license-session')); } catch (e) { tried.storage = 'failed: ' + e.name; }
        await fetch('/report', { method: 'POST', body: JSON.stringify(tried) });
      })();
    </script>`;
    let report: Record<string, string> | undefined;
    const other = createServer((req, res) => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString('utf8')));
      req.on('end', () => {
        if (req.url === '/report') report = JSON.parse(text) as Record<string, string>;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(req.url === '/report' ? '' : hostile);
      });
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    later(other, (o) => new Promise((resolve) => o.close(resolve)));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;

    const context = later(await browser.newContext(), (c) => c.close());
    const page = await open(manager, context);
    const s = (await page.evaluate("sessionStorage.getItem('plugin-license-session')")) as string;
    expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Visited in another tab, then in the manager's own tab.
    for (const tab of [await context.newPage(), page]) {
      report = undefined;
      await tab.goto(otherUrl);
      await expect.poll(() => report).toBeDefined();
      // The simple post reaches the manager (refused: a foreign Origin); even its opaque answer is
      // withheld (Cross-Origin-Resource-Policy). The others need a preflight, which fails.
      expect(report).toEqual({
        'simple post, no-cors': 'failed: TypeError',
        'json post with a guessed session': 'failed: TypeError',
        'the live view': 'failed: TypeError',
        storage: 'null',
      });
    }
    // From the manager's tab, it opens the manager: that window got a copy of the tab's
    // sessionStorage, but a page with an opener does not use it.
    const [popup] = await Promise.all([context.waitForEvent('page'), page.evaluate(`window.open(${JSON.stringify(`${manager.origin}/`)}); 1`)]);
    await expect.poll(() => popup.getByRole('alert').textContent()).toMatch(/no session with the license manager/);
    // (It asked without one, was refused, and forgot the copy: in that window only.)
    expect(await popup.evaluate("sessionStorage.getItem('plugin-license-session')")).toBeNull();
    expect(await popup.getByRole('heading', { name: 'Your licenses' }).count()).toBe(0);
    // Back in the manager's tab, the page has its session still.
    await page.goBack();
    await page.getByRole('heading', { name: 'Your licenses' }).waitFor();

    expect(received.length).toBeGreaterThanOrEqual(4);
    for (const r of received) {
      expect(r.headers.cookie, r.url).toBeUndefined();
      expect(r.headers.authorization, r.url).toBeUndefined();
      expect(JSON.stringify(r), r.url).not.toContain(s);
      expect(JSON.stringify(r), r.url).not.toContain(manager.token);
    }
    // Replayed against the manager with everything it got, a forged Host and Origin: 401, no slot freed.
    const answers: RawAnswer[] = [];
    for (const r of received) {
      const { host: _host, origin: _origin, 'content-length': _length, connection: _connection, ...headers } = r.headers;
      const forged = { ...(headers as Record<string, string>), host: `127.0.0.1:${manager.port}`, origin: manager.origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' };
      answers.push(await raw(manager.port, 'POST', '/api/deactivate', forged, JSON.stringify({ project_id: service.emulator.projectId })));
      answers.push(await raw(manager.port, 'GET', '/api/events', { ...forged, origin: manager.origin }));
    }
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 401));
    expect(await slots()).toBe(1);
    expect(((await agentRpc(agent!.socket, 'check', { project_id: service.emulator.projectId })).result as { valid: boolean }).valid).toBe(true);
    expect(await context.cookies()).toEqual([]);
  });

  it('opens the browser through a 0600 redirect file, never with the token on a command line', async () => {
    const dir = home();
    const record = join(dir, 'browser-args.json');
    const fakeBrowser = join(dir, 'browser.cjs');
    writeFileSync(fakeBrowser, `#!${process.execPath}\nrequire('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)));\n`, { mode: 0o755 });
    const env = envFor(service, dir, { BROWSER: fakeBrowser });
    later(await startAgent({ socket: env.PLUGIN_LICENSE_SOCKET as string, baseUrl: service.emulator.baseUrl, home: dir }), (a) => a.stop('keep-home'));
    const manager = later(await startManager(env, []), (m) => m.stop());
    await expect.poll(() => existsSync(record)).toBe(true);
    const args = JSON.parse(readFileSync(record, 'utf8')) as string[];
    expect(args).toHaveLength(1);
    expect(args.join(' ')).not.toContain(manager.token);
    const file = args[0] as string;
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain(manager.url);

    const context = later(await browser.newContext(), (c) => c.close());
    const page = await context.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.getByRole('heading', { name: 'Your licenses' }).waitFor();
    expect(page.url()).toBe(`${manager.origin}/`);
    // Spent: the file goes once the page has its session.
    await expect.poll(() => existsSync(file)).toBe(false);
  });

  it('says a cache folder that refuses its registration (what manager stop reads) or the redirect file, gives out no url, and leaves nothing', async () => {
    const dir = home();
    writeFileSync(join(dir, 'cache'), 'a file where the cache folder would be\n');
    const env = envFor(service, dir, { BROWSER: join(dir, 'never-run') });
    for (const args of [['manager'], ['manager', '--no-open']]) {
      const r = await cli(args, env);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/cannot register the license manager in .*cache \(E[A-Z]+\); make that folder writable/);
    }
    expect(readFileSync(join(dir, 'cache'), 'utf8')).toBe('a file where the cache folder would be\n');
  });

  it('a manager killed with its redirect file left behind: the link in it opens no later manager', async () => {
    const dir = home();
    const record = join(dir, 'browser-args.json');
    const fakeBrowser = join(dir, 'browser.cjs');
    writeFileSync(fakeBrowser, `#!${process.execPath}\nrequire('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)));\n`, { mode: 0o755 });
    const env = envFor(service, dir, { BROWSER: fakeBrowser });
    const first = later(await startManager(env, []), (m) => m.stop());
    await expect.poll(() => existsSync(record)).toBe(true);
    const file = (JSON.parse(readFileSync(record, 'utf8')) as string[])[0] as string;
    await first.stop('SIGKILL');
    expect(existsSync(file)).toBe(true);
    const stale = /#token=([^"&]+)/.exec(readFileSync(file, 'utf8'))?.[1];
    // A later manager on the same port: the dead token is not its own.
    const second = later(await startManager(env, ['--no-open', '--port', String(first.port)]), (m) => m.stop());
    const r = await raw(second.port, 'POST', '/api/session', { origin: second.origin, 'content-type': 'application/json' }, JSON.stringify({ token: stale }));
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error.code).toBe('bad_token');
  });

  it('stops by itself when no page has been open for --idle-minutes, and at once on SIGTERM', async () => {
    const { manager } = await computer({ args: ['--idle-minutes', '0.02'] });
    expect(await manager.exited).toBe(0);
    expect(manager.stderr()).toMatch(/stopped: no page was open for 0\.02 minutes/);

    // Closing the last page starts the count (that an open page stops it is manager-server.test.ts's).
    const kept = await computer({ args: ['--idle-minutes', '0.02'] });
    const page = await open(kept.manager);
    await page.close();
    expect(await kept.manager.exited).toBe(0);

    const third = await computer();
    expect(await third.manager.stop('SIGTERM')).toBe(130);
    expect(third.manager.stderr()).toMatch(/stopped: interrupted/);
  });
});

describe('plugin-license manager: its line says whether a browser opened', () => {
  const { service, home } = useCliService();

  /** An opener that runs `body` (sh), in a folder named with spaces, quotes, `*` and `$`. */
  function opener(dir: string, name: string, body: string): string {
    const folder = join(dir, `bin 'q' "d" * $x`);
    mkdirSync(folder, { recursive: true });
    const file = join(folder, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  }

  it('opened: false with the reason when the opener fails, is missing or is killed; true when it opened; the token only in the url', async () => {
    const dir = home();
    const record = join(dir, 'opened-with.txt');
    const cases: Array<[string, Record<string, string>, boolean, RegExp | undefined]> = [
      ['exits 3', { BROWSER: opener(dir, 'fails', 'exit 3') }, false, /^.*fails exited with status 3$/],
      ['missing', { BROWSER: join(dir, 'no such browser') }, false, /no such browser: not found$/],
      ['killed', { BROWSER: opener(dir, 'killed', 'kill -TERM $$') }, false, /killed was stopped by SIGTERM$/],
      // No BROWSER: the system's opener, found on PATH; xdg-open's status 3 in words.
      ['xdg-open exits 3', { PATH: `${join(dir, 'xdg')}:${process.env.PATH ?? ''}` }, false, /^xdg-open exited with status 3: no program to open a web page was found$/],
      ['opens', { BROWSER: opener(dir, 'opens', `printf '%s' "$1" > '${record}'`) }, true, undefined],
    ];
    mkdirSync(join(dir, 'xdg'));
    writeFileSync(join(dir, 'xdg', 'xdg-open'), '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    for (const [what, extra, opened, reason] of cases) {
      const env = envFor(service, dir, { BROWSER: undefined, ...extra });
      const manager = await startManager(env, []);
      try {
        expect(manager.line.opened, what).toBe(opened);
        expect(Object.keys(manager.line).sort(), what).toEqual(opened ? ['opened', 'pid', 'url'] : ['opened', 'pid', 'reason', 'url']);
        if (reason) expect(manager.line.reason, what).toMatch(reason);
        expect(manager.line.reason ?? '', what).not.toContain(manager.token);
        if (!opened) expect(manager.stderr(), what).toMatch(/could not open a web browser \(.+\); open .*manager-\d+\.html in one/);
        else expect(readFileSync(record, 'utf8')).toMatch(/manager-\d+\.html$/);
        expect(manager.stderr(), what).not.toContain(manager.token);
      } finally {
        await manager.stop();
      }
    }
    const quiet = await startManager(envFor(service, dir), ['--no-open']);
    try {
      expect(quiet.line).toEqual({ url: quiet.url, pid: quiet.pid, opened: false, reason: '--no-open' });
    } finally {
      await quiet.stop();
    }
  });

  it('an opener still running after the settle time is a browser in the foreground: opened, and left running', async () => {
    const dir = home();
    const pidFile = join(dir, 'browser.pid');
    const browser = opener(dir, 'stays', `echo $$ > '${pidFile}'; exec sleep 600`);
    const why = await openInBrowser(join(dir, 'page.html'), { PATH: process.env.PATH, BROWSER: browser }, 0);
    expect(why).toBeUndefined();
    await expect.poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '').toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(spawnSync('kill', ['-0', String(pid)]).status).toBe(0);
    process.kill(pid, 'SIGTERM');
  });
});

describe('plugin-license manager: its arguments', () => {
  const { service, home } = useCliService();

  it('refuses a bad port, idle time or project, in words, with exit 2', async () => {
    const env = envFor(service, home());
    for (const [args, message] of [
      [['--port', '70000'], /--port must be a whole number from 0 to 65535/],
      [['--idle-minutes', '0'], /--idle-minutes must be a number of minutes from 0\.01 to 1440/],
      [['--project', 'acme-reverb'], /project id/i],
      [['--project', `${service.emulator.projectId}=`], /"" is not usable as the plugin's name: it is empty; give one line of 1 to 80 characters/],
      [['--project', `${service.emulator.projectId}=Acme\nReverb`], /"Acme\\nReverb" is not usable as the plugin's name: it holds a line break/],
      [['--project', `${service.emulator.projectId}=\u001b[31mRed`], /is not usable as the plugin's name: it holds a line break, a control or a text-direction character;/],
      [['--project', `${service.emulator.projectId}=Acme \u202eesreveR`], /text-direction character/],
      [['--project', `${service.emulator.projectId}=${'x'.repeat(81)}`], /it is 81 characters long; give one line of 1 to 80 characters$/m],
    ] as const) {
      const r = await cli(['manager', '--no-open', ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });

  it('shows a name as the vendor wrote it (quotes, $, globs, backslashes, any script), and the last --project of an id wins', async () => {
    const env = envFor(service, home());
    const names = ['Acme "Reverb" it\'s', '$HOME ${PATH} $(id) `id`', '* ?[a-z]', 'back\\slash\\', 'Übersteuer 音 🎛', '<b>bold</b>'];
    const ids = names.map((_, i) => `00000000-0000-4000-8000-00000000000${i}`);
    const manager = await startManager(env, ['--no-open', ...names.flatMap((n, i) => ['--project', `${ids[i]!.toUpperCase()}=  ${n}  `]), '--project', `${ids[0]}=First`, '--project', `${ids[0]}=Acme "Reverb" it's`]);
    try {
      const events = await raw(manager.port, 'GET', '/api/events', bearer(await session(manager)));
      const snapshot = JSON.parse(/^data: (.*)$/m.exec(events.body)![1]!) as { products: Array<{ project_id: string; name: string }> };
      expect(snapshot.products).toEqual(names.map((name, i) => ({ project_id: ids[i], name })));
    } finally {
      await manager.stop();
    }
  });

  it('says a port in use, and how to choose another', async () => {
    const env = envFor(service, home());
    const first = await startManager(env);
    try {
      const r = await cli(['manager', '--no-open', '--port', String(first.port)], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`port ${first.port} on 127\\.0\\.0\\.1 is in use; choose another with --port, or --port 0`));
    } finally {
      await first.stop();
    }
  });
});

describe('plugin-license manager stop: what an uninstaller runs before the program goes', () => {
  const { service, home } = useCliService();

  it("stops every manager of this namespace, asked on its port with its registration's secret; leaves another namespace's; removes a registration nothing answers for and signals no one", async () => {
    const dir = home();
    const env = envFor(service, dir);
    const other = { ...envFor(service, join(dir, 'other')), PLUGIN_LICENSE_APP: 'other-vendor' };
    const managers = [await startManager(env), await startManager(env), await startManager(other)];
    // A registration a killed manager left: its pid now a process of someone else's (a sleeper of
    // ours stands for it) and its port now another program's, which answers something else.
    const sleeper = spawn('sleep', ['60']);
    const stranger = createServer((_req, res) => res.writeHead(403).end('{"error":{}}'));
    await new Promise<void>((r) => stranger.listen(0, '127.0.0.1', () => r()));
    try {
      const cache = join(dir, 'cache');
      expect(readdirSync(cache).filter((n) => /^manager-\d+\.json$/.test(n)).sort()).toEqual(managers.slice(0, 2).map((m) => `manager-${m.pid}.json`).sort());
      const registration = JSON.parse(readFileSync(join(cache, `manager-${managers[0]!.pid}.json`), 'utf8')) as { pid: number; port: number; stop: string };
      expect(registration).toEqual({ pid: managers[0]!.pid, port: managers[0]!.port, stop: expect.stringMatching(/^[\w-]{43}$/) });
      expect(statSync(join(cache, `manager-${managers[0]!.pid}.json`)).mode & 0o777).toBe(0o600);
      // The secret is not the page's token, nor anything a page is given.
      expect(registration.stop).not.toBe(managers[0]!.token);
      writeFileSync(join(cache, `manager-${sleeper.pid}.json`), JSON.stringify({ pid: sleeper.pid, port: (stranger.address() as AddressInfo).port, stop: 'x' }));
      // A wrong secret on a live manager's port: refused, and it runs on.
      const wrong = await raw(managers[0]!.port, 'POST', '/api/stop', { origin: managers[0]!.origin, 'content-type': 'application/json' }, JSON.stringify({ token: managers[0]!.token }));
      expect(wrong.status).toBe(403);
      const r = await cli(['manager', 'stop', '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ stopped: managers.slice(0, 2).map((m) => m.pid).sort((a, b) => a - b), stale: 1 });
      expect(await managers[0]!.exited).toBe(0);
      expect(await managers[1]!.exited).toBe(0);
      expect(managers[0]!.stderr()).toMatch(/license manager stopped: asked to stop \(manager stop/);
      expect(readdirSync(cache).filter((n) => n.startsWith('manager-'))).toEqual([]);
      expect(sleeper.exitCode).toBeNull();
      expect(managers[2]!.child.exitCode).toBeNull();
      const none = await cli(['manager', 'stop'], env);
      expect(none).toMatchObject({ code: 0, stdout: 'no license manager was running\n' });
    } finally {
      sleeper.kill();
      stranger.close();
      for (const m of managers) await m.stop();
    }
  });
});

describe.runIf(browserPath === undefined && required)('the license manager page', () => {
  it('has a browser (PLUGIN_LICENSE_REQUIRE_BROWSER=1)', () => {
    expect.fail('chromium is not installed: apt-get install chromium (or set PLUGIN_LICENSE_CHROMIUM to a Chromium executable)');
  });
});
