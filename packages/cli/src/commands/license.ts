import type { LicenseState } from '@plugin-license/agent';
import { codeHint } from '@plugin-license/api';
import { parseSignedTicket } from '@plugin-license/api/signed-ticket';
import { getMachineId, type LicenseStatus } from '@plugin-license/licensing';
import { nameField, packagedFolder, pluginField, productName, projectLabel } from '../plugin-names.js';
import type { Context } from '../context.js';
import { EXIT, usageError, type ExitCode } from '../exit.js';
import { when } from '../output.js';

/** How a local license operation went: through the running agent (plugins hear of it at once) or the library. */
export type Via = 'agent' | 'library';

/**
 * Why it went that way, said after the fields: `library` when no agent answered, `direct` for a
 * command that always uses the library (validate, offline import), whose stored answer a running
 * agent reads again within a second (its watch of the license file).
 */
export type Route = Via | 'direct';

const ROUTE_TEXT: Record<Route, string> = {
  agent: 'through the running agent (plugins see it at once)',
  library: 'directly with the library (no agent answers for this namespace)',
  direct: 'directly with the library (a running agent reads the stored answer within a second)',
};

/** What a time-out says of an answer the running agent was to bring from the service (it goes on and keeps what it hears). */
export const THROUGH_AGENT = 'asked through the running agent, which goes on asking and keeps what it hears';

/** `status <code>`: the public status of a code. */
export async function statusCommand(ctx: Context, rawCode: string): Promise<ExitCode> {
  const code = ctx.code(rawCode);
  const client = ctx.client(false);
  const s = await ctx.out.spin('asking the service', () => client.activation.status(code));
  const exit = s.is_revoked ? EXIT.negative : EXIT.ok;
  if (ctx.out.json) {
    ctx.out.document({ code_hint: codeHint(code), activations: s.activations, max_activations: s.max_activations, available: s.available, is_revoked: s.is_revoked });
    return exit;
  }
  ctx.out.fields([
    ['code', codeHint(code)],
    ['activations', `${s.activations} of ${s.max_activations}`],
    ['available', s.available === 0 ? ctx.out.warn('0 (every slot is taken)') : String(s.available)],
    ['revoked', s.is_revoked ? ctx.out.bad('yes') : 'no'],
  ]);
  if (s.activations > 0) ctx.out.note("which machines hold the slots is not something the service can say: a machine's id is in its doctor report, or printed by machine-id on it");
  return exit;
}

/**
 * `activate <code> --project ID [--machine-id ID]`. For another machine, the service is asked and
 * its answer printed: nothing is stored here, since this home holds this machine's licenses only
 * (a state stored for another machine id would set this machine's own license aside).
 */
export async function activateCommand(ctx: Context, rawCode: string, o: { project: string; machineId?: string }): Promise<ExitCode> {
  const code = ctx.code(rawCode);
  const projectId = ctx.projectId(o.project);
  if (o.machineId !== undefined && o.machineId !== (await thisMachineId(ctx))) {
    const machineId = o.machineId;
    const r = await ctx.out.spin('asking the service', () => ctx.client(false).activation.activate({ code, machine_id: machineId, plugin_id: projectId }));
    if (ctx.out.json) {
      const { success: _success, ...rest } = r;
      ctx.out.document({ project_id: projectId, ...nameField(projectId), code_hint: codeHint(code), machine_id: machineId, activated: r.success, ...rest });
    } else {
      ctx.out.fields([
        ...pluginField(projectId),
        ['license', r.success ? ctx.out.ok('activated') : ctx.out.bad('not activated')],
        ['code', codeHint(code)],
        ['machine id', machineId],
        ['activations', `${r.activations} of ${r.max_activations}`],
      ]);
      ctx.out.note('for that machine: nothing was stored on this computer');
    }
    return r.success ? EXIT.ok : EXIT.negative;
  }
  const agent = await ctx.agent(undefined, { start: true });
  const via: Via = agent ? 'agent' : 'library';
  const state = await ctx.out.spin('activating', () => (agent ? ctx.deadline.bound(agent.activate(projectId, code), THROUGH_AGENT) : ctx.license(projectId).activate(code, { signal: ctx.signal })));
  await report(ctx, 'activated', state, via);
  return validity(state);
}

async function thisMachineId(ctx: Context): Promise<string> {
  const config = ctx.inspectionConfig;
  return (await getMachineId({ namespace: config.namespace.value, ...(config.home.value === undefined ? {} : { home: config.home.value }) })).id;
}

/** `validate --project ID [--code CODE --machine-id ID]`. */
export async function validateCommand(ctx: Context, o: { project: string; code?: string; machineId?: string }): Promise<ExitCode> {
  const projectId = ctx.projectId(o.project);
  if (o.code !== undefined || o.machineId !== undefined) {
    const { code, machineId } = pair(ctx, o);
    const r = await ctx.out.spin('asking the service', () => ctx.client(false).activation.validate({ code, machine_id: machineId, plugin_id: projectId }));
    const exit = r.valid ? EXIT.ok : EXIT.negative;
    if (ctx.out.json) {
      ctx.out.document({ project_id: projectId, ...nameField(projectId), code_hint: codeHint(code), machine_id: machineId, ...r });
      return exit;
    }
    ctx.out.fields([
      ...pluginField(projectId),
      ['license', r.valid ? ctx.out.ok('valid') : ctx.out.bad(`not valid: ${r.reason ?? 'no reason given'}`)],
      ['code', codeHint(code)],
      ['machine id', machineId],
    ]);
    return exit;
  }
  const license = ctx.license(projectId);
  const state = await ctx.out.spin('validating', () => license.validate({ force: true, slots: true, signal: ctx.signal }));
  await report(ctx, 'validated', state, 'direct');
  // The library keeps the stored state when the service is not heard (the offline grace): say
  // so, and why, rather than let it pass for the service's word.
  if (state.source === 'cache' && state.reason !== 'not_activated') {
    const why = ctx.deadline.remainingMs() === 0 ? ctx.deadline.timeoutError('POST /plugin-activation/validate').message : 'the service could not be reached';
    ctx.out.note(`${why}. Shown is the state stored on this computer, not the service's word`);
  }
  return validity(state);
}

/** `deactivate --project ID [--code CODE --machine-id ID]`. */
export async function deactivateCommand(ctx: Context, o: { project: string; code?: string; machineId?: string }): Promise<ExitCode> {
  const projectId = ctx.projectId(o.project);
  if (o.code !== undefined || o.machineId !== undefined) {
    // Another machine's slot (a dead or stolen computer): nothing local changes.
    const { code, machineId } = pair(ctx, o);
    if (machineId === (await thisMachineId(ctx)) && ctx.license(projectId).check().codeHint !== null) {
      // This computer's own slot of a license stored here goes the one way a release goes (its
      // ticket says "not licensed" first, the state follows), never around it.
      throw usageError(`machine id ${machineId} is this computer's, and it holds a license of ${projectLabel(projectId)}: give it back with deactivate --project ${projectId} (without --code and --machine-id)`);
    }
    const r = await ctx.out.spin('releasing the slot', () => ctx.client(false).activation.deactivate({ code, machine_id: machineId, plugin_id: projectId }));
    // The service answers success false when that machine holds no slot (a mistyped id): nothing was released.
    const exit = r.success ? EXIT.ok : EXIT.negative;
    if (ctx.out.json) {
      const { success: _success, ...rest } = r;
      ctx.out.document({ project_id: projectId, ...nameField(projectId), code_hint: codeHint(code), machine_id: machineId, released: r.success, ...rest });
      return exit;
    }
    const name = productName(projectId);
    const of = name === undefined ? '' : ` of ${name}`;
    if (r.success) ctx.out.line(`Released the slot of machine ${machineId} for ${codeHint(code)}${of}: ${r.activations} of ${r.max_activations} slots now in use.`);
    else ctx.out.line(`Nothing released: machine ${machineId} holds no slot of ${codeHint(code)}${of} (${r.activations} of ${r.max_activations} slots in use); check the machine id in the customer's doctor report.`);
    return exit;
  }
  const agent = await ctx.agent(undefined, { start: true });
  const state = await ctx.out.spin('deactivating', () => (agent ? ctx.deadline.bound(agent.deactivate(projectId), THROUGH_AGENT) : ctx.license(projectId).deactivate({ signal: ctx.signal })));
  await report(ctx, 'deactivated', state, agent ? 'agent' : 'library');
  return EXIT.ok; // released: the state says not_activated, which is what was asked

}

/**
 * `deactivate --all`: this machine's slot of every license the namespace holds, given back one by
 * one (through the agent when one answers, so each intent is recorded before the service is asked;
 * else the library). What an uninstaller runs before it removes anything. A license activated
 * offline is left for `offline deactivate`. Every project is tried; exit 0 when none failed.
 */
export async function deactivateAllCommand(ctx: Context, o: { productId?: string } = {}): Promise<ExitCode> {
  const keptFor = await licensesOfOtherProducts(o.productId);
  const agent = await ctx.agent();
  const { readCachedStatus } = await import('@plugin-license/licensing');
  const held = agent
    ? (await agent.list()).map((s) => ({ projectId: s.projectId, source: s.source, reason: s.reason }))
    : (await readCachedStatus({ namespace: ctx.config.namespace.value, ...(ctx.config.home.value === undefined ? {} : { home: ctx.config.home.value }) })).map((c) => ({ projectId: c.projectId, source: c.status.source, reason: c.status.reason }));
  const released: string[] = [];
  const skipped: Array<{ project_id: string; why: string }> = [];
  const failed: Array<{ project_id: string; code: string; message: string; exit: ExitCode }> = [];
  const { classify } = await import('../errors.js');
  for (const { projectId, source, reason } of held) {
    if (source === 'offline') {
      skipped.push({ project_id: projectId, why: 'activated offline: release it with offline deactivate, then offline confirm on a computer that is online' });
      continue;
    }
    if (reason === 'not_activated') continue;
    const other = keptFor(projectId);
    if (other !== undefined) {
      skipped.push({ project_id: projectId, why: other });
      continue;
    }
    try {
      await ctx.out.spin(`deactivating ${projectId}`, () => (agent ? ctx.deadline.bound(agent.deactivate(projectId), THROUGH_AGENT) : ctx.license(projectId).deactivate({ signal: ctx.signal })));
      released.push(projectId);
    } catch (err) {
      const f = classify(err);
      failed.push({ project_id: projectId, code: f.code, message: f.message, exit: f.exit });
    }
  }
  const via = agent ? 'agent' : 'library';
  if (ctx.out.json) {
    // `names` (project id to name) only for the projects the executable names: released is a list of ids.
    const names: Record<string, string> = {};
    for (const id of [...released, ...skipped.map((s) => s.project_id), ...failed.map((f) => f.project_id)]) {
      const name = productName(id);
      if (name !== undefined) names[id] = name;
    }
    ctx.out.document({
      via,
      released,
      skipped: skipped.map((s) => ({ ...s, ...nameField(s.project_id) })),
      failed: failed.map(({ exit: _exit, ...f }) => ({ ...f, ...nameField(f.project_id) })),
      ...(Object.keys(names).length > 0 ? { names } : {}),
    });
  } else {
    if (released.length === 0 && skipped.length === 0 && failed.length === 0) ctx.out.line('This computer holds no license to give back.');
    for (const p of released) ctx.out.line(`released this computer's slot of ${projectLabel(p)}, through the ${via}`);
    for (const s of skipped) ctx.out.line(`kept ${projectLabel(s.project_id)}: ${s.why}`);
    for (const f of failed) ctx.out.line(`could not release ${projectLabel(f.project_id)}: ${f.message}`);
  }
  return failed[0]?.exit ?? EXIT.ok;
}

/**
 * With `--product-id` (a product's uninstaller): the rule of `licenseKeptFor` over the products
 * recorded beside this packaged program (none under plain Node: every license is released).
 */
async function licensesOfOtherProducts(productId: string | undefined): Promise<(projectId: string) => string | undefined> {
  if (productId === undefined) return () => undefined;
  const { productIdProblem } = await import('@plugin-license/licensing');
  const problem = productIdProblem(productId);
  if (problem !== undefined) throw usageError(`--product-id ${JSON.stringify(productId)}: ${problem}`);
  const folder = packagedFolder();
  const { installedProducts, licenseKeptFor } = await import('../plugins/products.js');
  const products = folder === undefined ? [] : installedProducts(folder);
  return (projectId) => licenseKeptFor(products, productId, projectId);
}

/** `machine-id`: this machine's id as the service sees it, and where it comes from. */
export async function machineIdCommand(ctx: Context): Promise<ExitCode> {
  const config = ctx.inspectionConfig;
  const { id, source } = await getMachineId({ namespace: config.namespace.value, ...(config.home.value === undefined ? {} : { home: config.home.value }) });
  if (ctx.out.json) ctx.out.document({ machine_id: id, source, namespace: config.namespace.value });
  else ctx.out.fields([
    ['machine id', id],
    ['source', source === 'os' ? 'os (derived from the operating system id)' : source === 'generated' ? 'generated (the OS gives none; kept in the data folder)' : source],
    ['namespace', config.namespace.value],
  ]);
  return EXIT.ok;
}

function pair(ctx: Context, o: { code?: string; machineId?: string }): { code: string; machineId: string } {
  if (o.code === undefined || o.machineId === undefined) {
    throw usageError('--code and --machine-id go together: give both to act on another machine, or neither for this one');
  }
  return { code: ctx.code(o.code), machineId: o.machineId };
}

/** Exit 0 when the license is valid, 3 when not (activate, validate, agent check and refresh). */
export function validity(state: LicenseStatus): ExitCode {
  return state.valid ? EXIT.ok : EXIT.negative;
}

/** A license state, as a JSON document or aligned fields, and which way it went. */
export async function report(ctx: Context, done: string, state: LicenseState | LicenseStatus, route: Route): Promise<void> {
  if (ctx.out.json) {
    // The agent protocol's LicenseState, by the agent's own mapping (loaded only here).
    const { toWireState } = await import('@plugin-license/agent');
    const via: Via = route === 'agent' ? 'agent' : 'library';
    ctx.out.document({ via, license: { ...toWireState(state), ...nameField(state.projectId) } });
    return;
  }
  ctx.out.fields(licenseFields(ctx, state));
  ctx.out.note(`${done} ${ROUTE_TEXT[route]}`);
}

export function licenseFields(ctx: Context, s: LicenseStatus): Array<[string, string]> {
  return [
    ...pluginField(s.projectId),
    ['project', s.projectId],
    ['license', s.valid ? ctx.out.ok('valid') : ctx.out.bad(`not valid: ${s.reason}`)],
    ['code', s.codeHint ?? '-'],
    ['activations', s.activations === null ? '-' : `${s.activations} of ${s.maxActivations}`],
    ['source', s.source],
    ['last online check', when(s.checkedAt)],
    [s.source === 'offline' ? 'valid until' : 'valid offline until', when(s.graceUntil)],
    ['next check', when(s.nextCheckAt)],
    ...signedField(s),
  ];
}

/** The signed ticket's line, when one is stored and the license stands on it: who signed it, until when. */
function signedField(s: LicenseStatus): Array<[string, string]> {
  if (!s.valid || s.signedTicket === null) return [];
  const parsed = parseSignedTicket(s.signedTicket);
  if (!parsed.ok) return [];
  return [['signed', `by the vendor until ${when(new Date(parsed.ticket.fields.valid_until * 1000))} (key ${parsed.ticket.kid})`]];
}
