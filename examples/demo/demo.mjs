#!/usr/bin/env node
// The main job (`pnpm demo`): a narrated end-to-end run on loopback.
//
//   emulator (the service) <- agent (owns the license) <- plugin host (C client) / companion app (Node)
//
// Everything it starts, it stops; it exits 0 when every step behaved as narrated.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ServiceClient, codeHint } from '@plugin-license/api';
import { AgentClient } from '@plugin-license/agent';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const emulatorBin = join(root, 'packages/emulator/dist/cli.js');
const agentBin = join(root, 'agent/bin/plugin-license-agent.js');
const cliBin = join(root, 'packages/cli/bin/plugin-license.js');
const cDir = join(root, 'plugin/plugin_license/plc');
const receiverBin = join(root, 'examples/webhook-receiver/receiver.mjs');

const children = [];
const cleanups = [];
let step = 0;

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
function title(text) {
  step += 1;
  console.log(`\n${bold(`${step}. ${text}`)}`);
}
function say(text) {
  console.log(`   ${text}`);
}
function show(label, value) {
  console.log(`   ${dim(label.padEnd(16))} ${value}`);
}
function expect(condition, what) {
  if (!condition) throw new Error(`demo expectation failed: ${what}`);
}
/** Accepts both the agent's wire form (snake_case, from the C client) and AgentClient's camelCase. */
function describeState(s) {
  const verdict = s.valid ? 'VALID' : `NOT VALID (${s.reason})`;
  const hint = s.codeHint ?? s.code_hint ?? '-';
  const max = s.maxActivations ?? s.max_activations ?? '?';
  return `${verdict}, source ${s.source}, code ${hint}, slots ${s.activations ?? '?'}/${max}`;
}
const isoOf = (d) => (d instanceof Date ? d.toISOString() : String(d));

/** Starts a node child process and resolves with the first JSON line it prints on stdout. */
async function startJsonLineProcess(name, args, env) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push({ name, child });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line),
    once(child, 'exit').then(([code]) => {
      throw new Error(`${name} exited with ${code} before it was ready:\n${stderr}`);
    }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${name} did not start within 15 s:\n${stderr}`)), 15_000).unref()),
  ]);
  return { child, info: JSON.parse(first) };
}

async function stopChild(name, child) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  const [code, signal] = await exited;
  clearTimeout(timer);
  return code ?? signal;
}

function hasCompiler() {
  return spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0 && spawnSync('make', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** The plugin's own ticket reader (plc-ticket, compiled with cc), or null where there is no compiler. */
function makeTicketTool() {
  if (!hasCompiler()) return null;
  const build = spawnSync('make', ['-s', '-C', cDir, 'build/plc-ticket'], { encoding: 'utf8' });
  if (build.status !== 0) return null;
  const bin = join(cDir, 'build/plc-ticket');
  return (env, projectId, args = []) => {
    const run = spawnSync(bin, [...args, projectId], { env: { ...process.env, ...env }, encoding: 'utf8' });
    return { exit: run.status, ...JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') };
  };
}

/** The plugin's view: the C example client (plc-check) when a compiler exists, else AgentClient. */
function makePluginQuery(socket, projectId, fallbackClient) {
  if (hasCompiler()) {
    const build = spawnSync('make', ['-s', '-C', cDir, 'build/plc-check'], { encoding: 'utf8' });
    if (build.status === 0) {
      const bin = join(cDir, 'build/plc-check');
      return {
        kind: `the C client (${bin.replace(root + '/', '')}, compiled with cc)`,
        async query() {
          const run = spawnSync(bin, [socket, projectId, '200'], { encoding: 'utf8' });
          const line = run.stdout.trim().split('\n').pop() ?? '';
          const parsed = JSON.parse(line);
          return { exit: run.status, ...parsed };
        },
      };
    }
    say(dim(`(the C example did not compile, using the Node client instead)\n${build.stderr}`));
  }
  return {
    kind: 'AgentClient (no C compiler on this machine)',
    async query() {
      return fallbackClient.check(projectId);
    },
  };
}

async function main() {
  for (const bin of [emulatorBin, agentBin, cliBin]) {
    expect(existsSync(bin), `${bin} exists (run \`pnpm build\` first; \`pnpm demo\` does)`);
  }

  console.log(bold('plugin-license demo: a license that keeps working on a plane, and stops when revoked'));

  title('Start the service emulator on loopback');
  const emulator = await startJsonLineProcess('emulator', [emulatorBin, '--port', '0'], {});
  const { base_url: baseUrl, token, project_id: projectId } = emulator.info;
  const origin = new URL(baseUrl).origin;
  show('base URL', baseUrl);
  show('project', projectId);
  say('It speaks the whole service interface; /__emulator/ controls let us cut the network later.');

  title('The vendor generates an activation code for the project');
  const api = new ServiceClient({ baseUrl, token });
  cleanups.push(() => api.close());
  const key = await api.activation.generate({ project_id: projectId, max_activations: 2, notes: 'demo customer' });
  show('code', `${codeHint(key.code)}  (shown as a hint: full codes never reach logs or sockets)`);
  show('slots', `${key.max_activations} machines`);

  title("Start the user's license agent, with an isolated home folder");
  const home = mkdtempSync(join(tmpdir(), 'plugin-license-demo-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const socket = join(home, 'agent.sock');
  const agent = await startJsonLineProcess('agent', [agentBin, 'run'], {
    PLUGIN_LICENSE_HOME: home,
    PLUGIN_LICENSE_SOCKET: socket,
    PLUGIN_LICENSE_BASE_URL: baseUrl,
    PLUGIN_LICENSE_APP: 'plugin-license-demo',
  });
  show('socket', `${agent.info.socket}  (folder 0700, socket 0600: only this user connects)`);
  show('pid', agent.info.pid);

  const companion = await AgentClient.connect({ socketPath: socket, timeoutMs: 2_000 });
  cleanups.push(() => companion.close());

  title('The installer activates the code through the agent');
  const activated = await companion.activate(projectId, key.code);
  show('state', describeState(activated));
  show('grace until', `${isoOf(activated.graceUntil)}  (how long it keeps working offline)`);
  expect(activated.valid && activated.source === 'online', 'activation is valid and online');

  title('A plugin inside a DAW asks the agent, as a plugin host would');
  const plugin = makePluginQuery(socket, projectId, companion);
  say(`Using ${plugin.kind}; it connects and answers within 200 ms or treats the license as unknown.`);
  const first = await plugin.query();
  show('plugin sees', describeState(first));
  expect(first.valid === true, 'the plugin sees a valid license');

  const pluginSubscription = await AgentClient.connect({ socketPath: socket, timeoutMs: 2_000 });
  cleanups.push(() => pluginSubscription.close());
  const sub = await pluginSubscription.subscribe(projectId);
  const changes = [];
  sub.on('changed', (s) => changes.push(s));
  say('The plugin also subscribes (here through AgentClient), so the agent pushes any change to it.');

  title('The musician opens the license manager (the page behind "Manage licenses…")');
  const managerEnv = { PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: socket, PLUGIN_LICENSE_BASE_URL: baseUrl, PLUGIN_LICENSE_APP: 'plugin-license-demo' };
  const manager = await startJsonLineProcess('manager', [cliBin, 'manager', '--no-open', '--project', `${projectId}=Demo Reverb`], managerEnv);
  const pageUrl = new URL(manager.info.url);
  show('page', `${pageUrl.origin}/#token=…  (the browser gets it through a 0600 file, never on a command line)`);
  const pageToken = pageUrl.hash.replace('#token=', '');
  const exchange = () => fetch(`${pageUrl.origin}/api/session`, { method: 'POST', headers: { origin: pageUrl.origin, 'content-type': 'application/json' }, body: JSON.stringify({ token: pageToken }) });
  const sessionAnswer = await exchange();
  expect(sessionAnswer.status === 200 && sessionAnswer.headers.get('set-cookie') === null, 'the page exchanges its one-time token for a session (in the answer, never a cookie)');
  // The page keeps it in its tab's sessionStorage and sends it in a header: a cookie would go to every port of 127.0.0.1.
  const auth = { authorization: `Bearer ${(await sessionAnswer.json()).session}` };
  const replayed = await exchange();
  show('the link again', `${replayed.status}: ${(await replayed.json()).error.message}`);
  expect(replayed.status === 403, 'a link used twice is refused');
  const stream = new AbortController();
  const events = await fetch(`${pageUrl.origin}/api/events`, { headers: auth, signal: stream.signal });
  let firstEvent = '';
  for await (const chunk of events.body) {
    firstEvent += Buffer.from(chunk).toString('utf8');
    if (/data: .*\n/.test(firstEvent)) break;
  }
  stream.abort();
  const view = JSON.parse(/data: (.*)/.exec(firstEvent)[1]);
  show('page shows', `Demo Reverb: ${describeState(view.licenses.find((l) => l.project_id === projectId))}`);
  expect(view.licenses.some((l) => l.project_id === projectId && l.valid), 'the page lists the license, live from the agent');
  const foreign = await fetch(`${pageUrl.origin}/api/refresh`, { method: 'POST', headers: { ...auth, origin: 'https://evil.example', 'content-type': 'application/json' }, body: JSON.stringify({ project_id: projectId }) });
  show('another site', `${foreign.status}: ${(await foreign.json()).error.message}`);
  expect(foreign.status === 403, 'a request from another site is refused');
  const sessionless = await fetch(`${pageUrl.origin}/api/refresh`, { method: 'POST', headers: { origin: pageUrl.origin, 'content-type': 'application/json' }, body: JSON.stringify({ project_id: projectId }) });
  show('without session', `${sessionless.status}: ${(await sessionless.json()).error.message}`);
  expect(sessionless.status === 401, 'a request without the session header is refused, whatever Host and Origin it says');
  await stopChild('manager', manager.child);
  say('Open it yourself: plugin-license manager (it opens your browser, and stops 15 minutes after the page is closed).');

  title('The musician boards a plane: the service becomes unreachable');
  await fetch(`${origin}/__emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'offline' }) });
  say('Every request to the service now has its connection cut.');
  const offline = await companion.refresh(projectId);
  show('refresh', describeState(offline));
  show('grace until', `${isoOf(offline.graceUntil)}  (still valid until then without the service)`);
  expect(offline.valid && offline.source === 'cache', 'offline the license is still valid, from the cache');
  const offlinePlugin = await plugin.query();
  show('plugin sees', describeState(offlinePlugin));
  expect(offlinePlugin.valid === true, 'the plugin still sees a valid license offline');
  say('No network call stood between the plugin and its answer: `check` is answered from memory.');

  title('Back online, the vendor revokes the code (a refund, say)');
  await fetch(`${origin}/__emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'none' }) });
  await fetch(`${origin}/__emulator/codes/${encodeURIComponent(key.code)}/revoke`, { method: 'POST' });
  say('The agent learns it at its next revalidation; here we ask it to refresh now.');
  const revoked = await companion.refresh(projectId);
  show('refresh', describeState(revoked));
  expect(!revoked.valid && revoked.reason === 'code_revoked', 'the revocation is seen online');
  const deadline = Date.now() + 5_000;
  while (!changes.some((s) => s.reason === 'code_revoked') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const pushed = changes.find((s) => s.reason === 'code_revoked');
  expect(pushed, 'the subscribed plugin was told of the revocation');
  show('plugin told', `changed: ${describeState(pushed)}`);
  const finalPlugin = await plugin.query();
  show('plugin sees', describeState(finalPlugin));
  expect(finalPlugin.valid === false, 'the plugin now sees the license as not valid');

  title('An air-gapped studio computer is activated by carrying two small files');
  const studioHome = mkdtempSync(join(tmpdir(), 'plugin-license-studio-'));
  const onlineHome = mkdtempSync(join(tmpdir(), 'plugin-license-online-'));
  cleanups.push(() => rmSync(studioHome, { recursive: true, force: true }), () => rmSync(onlineHome, { recursive: true, force: true }));
  const studioSocket = join(studioHome, 'agent.sock');
  // The studio never reaches the service: its base URL points where nothing listens.
  const studioEnv = { PLUGIN_LICENSE_HOME: studioHome, PLUGIN_LICENSE_SOCKET: studioSocket, PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:9/functions/v1', PLUGIN_LICENSE_APP: 'plugin-license-demo' };
  const onlineEnv = { PLUGIN_LICENSE_HOME: onlineHome, PLUGIN_LICENSE_BASE_URL: baseUrl, PLUGIN_LICENSE_APP: 'plugin-license-demo' };
  const studioAgent = await startJsonLineProcess('studio agent', [agentBin, 'run'], studioEnv);
  const studioKey = await api.activation.generate({ project_id: projectId, max_activations: 1, notes: 'demo studio' });
  const plCli = (env, ...args) => {
    const run = spawnSync(process.execPath, [cliBin, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    expect(run.status === 0, `plugin-license ${args.slice(0, 2).join(' ')} exits 0 (${run.stderr.trim()})`);
    return run;
  };
  const requestFile = join(onlineHome, 'request.json');
  const responseFile = join(onlineHome, 'response.json');
  plCli(studioEnv, 'offline', 'request', '--project', projectId, '--code', studioKey.code, '--out', requestFile);
  say('In the studio: plugin-license offline request --project … --code … --out request.json');
  show('request', `${readFileSync(requestFile, 'utf8').length} bytes of JSON (or one line of text with --text)`);
  plCli(onlineEnv, 'offline', 'activate', requestFile, '--out', responseFile, '--valid-days', '90');
  say('On any computer that is online: plugin-license offline activate request.json --out response.json');
  const response = JSON.parse(readFileSync(responseFile, 'utf8'));
  show('response', `activated for machine ${response.machine_name} (${response.activations}/${response.max_activations} slots), valid until ${response.valid_until}`);
  plCli(studioEnv, 'offline', 'import', responseFile);
  const importedAt = Date.now();
  say('Back in the studio: plugin-license offline import response.json');
  const studioCompanion = await AgentClient.connect({ socketPath: studioSocket, timeoutMs: 2_000 });
  cleanups.push(() => studioCompanion.close());
  const studioPlugin = makePluginQuery(studioSocket, projectId, studioCompanion);
  let studioSees = await studioPlugin.query();
  const seenBy = Date.now() + 2_000;
  while (studioSees.source !== 'offline' && Date.now() < seenBy) {
    await new Promise((r) => setTimeout(r, 50));
    studioSees = await studioPlugin.query();
  }
  const heardAfter = Date.now() - importedAt;
  show('plugin sees', describeState(studioSees));
  show('valid until', `${isoOf(studioSees.graceUntil ?? studioSees.grace_until)}  (no service was ever reachable from the studio)`);
  expect(studioSees.valid === true && studioSees.source === 'offline', 'the studio plugin sees a valid offline license');
  say(`The studio agent, already running, answered with it ${heardAfter} ms after the import: no restart.`);
  await studioCompanion.close();
  expect((await stopChild('studio agent', studioAgent.child)) === 0, 'the studio agent exits 0 on SIGTERM');

  title('The studio agent is stopped: the plugin still knows its license, from its ticket');
  const ticketTool = makeTicketTool();
  if (ticketTool === null) {
    say(dim('(no C compiler here: the plugin-side ticket reader, plc-ticket, is skipped)'));
  } else {
    const studioTicket = ticketTool(studioEnv, projectId);
    show('plugin reads', `${studioTicket.verdict}, source ${studioTicket.source}, code ${studioTicket.code_hint}, until ${new Date(studioTicket.valid_until * 1000).toISOString()}`);
    expect(studioTicket.exit === 0 && studioTicket.verdict === 'valid' && studioTicket.source === 'offline', 'with no agent running, the plugin judges its ticket valid');
    say('plc_ticket_check: the ticket the library wrote with the state, verified in-process with a key of this computer and vendor.');
    const edited = join(dirname(studioTicket.path), 'edited.ticket');
    writeFileSync(edited, readFileSync(studioTicket.path, 'utf8').replace(/"valid_until":\d/, (m) => `${m.slice(0, -1)}${(Number(m.slice(-1)) + 1) % 10}`));
    const forged = ticketTool(studioEnv, projectId, ['--file', edited]);
    show('edited copy', `${forged.verdict}: ${forged.problem}`);
    expect(forged.exit === 1 && forged.verdict === 'tampered', 'an edited ticket is not licensed');
    say('Stopping the agent unlocks nothing; a plugin that finds none running starts it (plc::Monitor, at most once per 30 s).');
  }

  title("The vendor's license relay signs the ticket; a plugin built with the vendor's key plays only on that signature");
  const relayHome = mkdtempSync(join(tmpdir(), 'plugin-license-relay-'));
  const signedHome = mkdtempSync(join(tmpdir(), 'plugin-license-signed-'));
  const forgerHome = mkdtempSync(join(tmpdir(), 'plugin-license-forger-'));
  cleanups.push(() => rmSync(relayHome, { recursive: true, force: true }), () => rmSync(signedHome, { recursive: true, force: true }), () => rmSync(forgerHome, { recursive: true, force: true }));
  const signingKeyFile = join(relayHome, 'relay-signing.key');
  const vendorKey = JSON.parse(plCli({ PLUGIN_LICENSE_HOME: relayHome }, '--json', 'relay', 'keygen', '--out', signingKeyFile).stdout);
  say('The vendor: plugin-license relay keygen --out relay-signing.key (the private key stays with the relay; the public key goes into the plugin).');
  show('public key', `${vendorKey.public_key}  (key id ${vendorKey.key_id})`);
  const relayKey = await api.activation.generate({ project_id: projectId, max_activations: 1, notes: 'demo signed' });
  const relay = await startJsonLineProcess('relay', [cliBin, 'relay', 'serve', '--port', '0'], {
    RELAY_SIGNING_KEY: readFileSync(signingKeyFile, 'utf8'),
    RELAY_SERVICE_URL: baseUrl,
    RELAY_SERVICE_TOKEN: token,
    RELAY_APP: 'plugin-license-demo',
    RELAY_PROJECTS: projectId,
  });
  show('relay', `${relay.info.base_url}  (plugin-license relay serve; the same handler runs on Deno and Cloudflare Workers)`);
  expect(relay.info.keys[0]?.kid === vendorKey.key_id, 'the relay signs with the key just made');
  // A musician's computer whose program was built with the relay and the key (pnpm package --relay --ticket-key).
  const signedEnv = { PLUGIN_LICENSE_HOME: signedHome, PLUGIN_LICENSE_BASE_URL: baseUrl, PLUGIN_LICENSE_APP: 'plugin-license-demo', PLUGIN_LICENSE_RELAY_URL: relay.info.base_url, PLUGIN_LICENSE_TICKET_KEYS: vendorKey.public_key, PLUGIN_LICENSE_NO_AUTOSTART: '1' };
  const signedActivation = JSON.parse(plCli(signedEnv, 'activate', relayKey.code, '--project', projectId, '--json').stdout).license;
  expect(signedActivation.valid === true && typeof signedActivation.signed_ticket === 'string', 'the activation through the relay is valid and carries a signed ticket');
  say('The musician activates as before; the request goes to the relay, which asks the service and signs what it says.');
  const signedFields = JSON.parse(signedActivation.signed_ticket.split('\n')[0]);
  show('signed ticket', `code ${signedFields.code_hint}, machine ${signedFields.machine_id.slice(0, 12)}…, until ${new Date(signedFields.valid_until * 1000).toISOString()}, key ${signedFields.kid}`);
  if (ticketTool === null) {
    say(dim('(no C compiler here: the plugin-side reader, plc-ticket --key, is skipped)'));
  } else {
    const withKey = ['--key', vendorKey.public_key];
    const plays = ticketTool(signedEnv, projectId, withKey);
    show('plugin reads', `${plays.verdict}, signed by ${plays.signer}, until ${new Date(plays.valid_until * 1000).toISOString()}`);
    expect(plays.exit === 0 && plays.verdict === 'valid' && plays.signer === vendorKey.key_id, "a plugin built with the vendor's key plays on the signed ticket");
    // A forger writes a ticket with a correct MAC (its key is computable on the computer), but cannot sign.
    const forgerEnv = { ...signedEnv, PLUGIN_LICENSE_HOME: forgerHome };
    const forgedTicket = ticketTool(forgerEnv, projectId).path;
    spawnSync('mkdir', ['-p', '-m', '700', join(forgerHome, 'data'), dirname(forgedTicket)]);
    writeFileSync(forgedTicket, readFileSync(plays.path, 'utf8'), { mode: 0o600 });
    const oldRule = ticketTool(forgerEnv, projectId);
    const newRule = ticketTool(forgerEnv, projectId, withKey);
    show('forged ticket', `a plugin without keys: ${oldRule.verdict}; built with the key: ${newRule.verdict} (${newRule.reason})`);
    expect(oldRule.verdict === 'valid' && newRule.exit === 1 && newRule.reason === 'unsigned', 'a ticket with a correct MAC and no signature keeps a plugin built with the key silent');
    const editedSigned = join(dirname(plays.path), 'edited.signed');
    const signedText = readFileSync(plays.path.replace(/\.ticket$/, '.signed'), 'utf8');
    writeFileSync(editedSigned, signedText.replace(/"valid_until":(\d+)/, (_, n) => `"valid_until":${Number(n) + 86400 * 365}`));
    const edited = ticketTool(signedEnv, projectId, [...withKey, '--signed-file', editedSigned]);
    show('a year added', `${edited.verdict}: ${edited.problem}`);
    expect(edited.exit === 1 && edited.verdict === 'tampered', 'an edited signed ticket is refused');
    say('Anything may say no; only the signature of the key compiled into the plugin says yes (docs/signed-ticket.md).');
  }
  plCli(signedEnv, 'deactivate', '--project', projectId);
  expect(!existsSync(join(signedHome, 'data', 'tickets', `${projectId.toLowerCase()}.signed`)), 'the signed ticket is removed before the slot is released');
  say('Deactivated: the signed ticket went first, then the service was asked to release the slot.');
  expect((await stopChild('relay', relay.child)) === 0, 'the relay exits 0 on SIGTERM');

  title("The vendor's push builds the plugin; the webhook receiver hears each step; the CLI downloads it");
  const buildsHome = mkdtempSync(join(tmpdir(), 'plugin-license-builds-'));
  cleanups.push(() => rmSync(buildsHome, { recursive: true, force: true }));
  const control = (method, path, body) =>
    fetch(`${origin}/__emulator${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => {
      expect(r.ok, `${method} /__emulator${path} answers 2xx`);
      return r.json();
    });
  const record = join(buildsHome, 'deliveries.jsonl');
  const receiver = await startJsonLineProcess('webhook receiver', [receiverBin, '--port', '0', '--record', record], { WEBHOOK_SECRET: emulator.info.webhook_secret });
  show('receiver', `${receiver.info.url}  (examples/webhook-receiver: verifies signatures, drops replays)`);
  await control('PUT', '/build-settings', { step_ms: 500 });
  await control('PUT', `/projects/${projectId}/triggers`, [{ trigger: 'push', branches: ['main'], paths: { include: ['Source/**'] }, build_config: { platforms: ['macos', 'windows'], formats: ['vst3', 'au'], release_type: 'patch' } }]);
  await control('PUT', `/projects/${projectId}/notifications`, { url: receiver.info.url, events: ['build.queued', 'build.started', 'build.success', 'build.failed', 'build.cancelled'], form: 'detailed' });
  say('Portal settings (emulator controls): a push trigger on main for Source/**, notifications to the receiver.');
  const docsOnly = await control('POST', `/projects/${projectId}/push`, { branch: 'main', files: ['docs/manual.md'] });
  show('docs push', `no build: ${docsOnly.reason}`);
  const pushedBuild = await control('POST', `/projects/${projectId}/push`, { branch: 'main', files: ['Source/PluginProcessor.cpp'] });
  show('code push', `build ${pushedBuild.build_id} ${pushedBuild.status}`);
  const vendorEnv = { PLUGIN_LICENSE_BASE_URL: baseUrl, PLUGIN_LICENSE_TOKEN: token, PLUGIN_LICENSE_HOME: buildsHome, NO_COLOR: '1' };
  say(`plugin-license builds watch ${pushedBuild.build_id.slice(0, 8)}… (exit 0 on success, 3 on failure):`);
  const watched = plCli(vendorEnv, 'builds', 'watch', pushedBuild.build_id, '--interval', '1');
  for (const line of watched.stdout.trim().split('\n')) say(`  ${line.replace(/^\S+ (AM|PM)?\s*/, '')}`);
  const outDir = join(buildsHome, 'dist');
  const downloaded = JSON.parse(plCli(vendorEnv, '--json', 'builds', 'download', pushedBuild.build_id, '--platform', 'windows', '--format', 'vst3', '--out', outDir).stdout);
  for (const d of downloaded.downloaded) show('downloaded', `${d.file.slice(buildsHome.length + 1)}: ${d.bytes} bytes, sha256 ${d.checksum_sha256.slice(0, 16)}… matches the service's`);
  // Every attempt has ended once the emulator lists its deliveries.
  const { deliveries } = await (await fetch(`${origin}/__emulator/deliveries`)).json();
  expect(deliveries.every((d) => d.delivered), 'every notification was delivered');
  const accepted = readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l).payload);
  show('receiver got', accepted.map((p) => p.event).sort().join(', '));
  expect(accepted.some((p) => p.event === 'build.success'), 'the receiver accepted build.success');
  expect((await stopChild('webhook receiver', receiver.child)) === 0, 'the receiver exits 0 on SIGTERM');

  title('Stop everything cleanly');
  for (const fn of cleanups.splice(0).reverse()) await fn();
  const agentExit = await stopChild('agent', agent.child);
  show('agent', `exited ${agentExit} on SIGTERM (finished in-flight requests, flushed state, removed ${existsSync(socket) ? 'NOT ' : ''}the socket)`);
  expect(agentExit === 0, 'the agent exits 0 on SIGTERM');
  expect(!existsSync(socket), 'the agent removed its socket');
  const emuExit = await stopChild('emulator', emulator.child);
  show('emulator', `exited ${emuExit}`);
  rmSync(home, { recursive: true, force: true });

  console.log(`\n${bold('Done.')} Activation, offline grace, revocation, an air-gapped activation, a plugin that knows its license with the agent stopped, a ticket only the vendor's relay can sign, and a build from push to verified download behaved as a musician and a vendor expect.`);
}

try {
  await main();
} catch (err) {
  console.error(`\ndemo failed: ${err instanceof Error ? err.message : err}`);
  process.exitCode = 1;
} finally {
  for (const fn of cleanups.reverse()) await Promise.resolve().then(fn).catch(() => {});
  for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
