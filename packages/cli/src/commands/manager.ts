import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { agentCommandHint, answerOfflineRequest, confirmOfflineRelease, offlineFileName, offlineText, releaseOffline } from '@plugin-license/licensing';
import { programName } from '@plugin-license/licensing/executable';
import { Context } from '../context.js';
import { classify } from '../errors.js';
import { CliError, EXIT, usageError, type ExitCode } from '../exit.js';
import { AgentLink } from '../manager/agent-link.js';
import { openInBrowser, writeRedirectFile } from '../manager/open.js';
import { newStopSecret, registerManager, stopManagers, type ManagerRegistration } from '../manager/registry.js';
import { ManagerServer, type ManagerBackend, type PageError } from '../manager/server.js';
import { Output } from '../output.js';
import { givenProjects, knownProducts } from '../plugin-names.js';
import { doctorCommand } from './doctor/index.js';
import { machineOptions, releaseFacts, responseFacts } from './offline.js';

export interface ManagerOptions {
  port: number;
  open: boolean;
  idleMinutes: number;
  /** `UUID` or `UUID=Name`: the vendor's plugins, offered for activation even before any is. */
  project: string[];
}

/** A plugin the page offers for activation, named when the vendor named it. */
interface Product {
  project_id: string;
  name: string | null;
}

/**
 * The plugins the page offers: every name known here (the vendor's installed products', the
 * executable's baked ones) joined with `--project UUID[=Name]` (each id checked as every project
 * id is, each name by the one rule of names); a name given here wins for its id.
 */
export function parseProducts(ctx: Context, values: readonly string[]): Product[] {
  return knownProducts(givenProjects(ctx, values)).map((p) => ({ project_id: p.projectId, name: p.name }));
}

/** The HTTP status of a failure, from its exit code: bad input 400, a negative answer 422, the agent away (or another user's socket in its place) 503, the service 502. */
function pageError(err: unknown): PageError {
  const f = classify(err);
  const status = f.code === 'not_running' || f.code === 'socket_dir_unsafe' ? 503 : f.exit === EXIT.usage ? 400 : f.exit === EXIT.negative ? 422 : 502;
  return { status, code: f.code, message: f.message };
}

const text = (body: Record<string, unknown>, key: string, what: string): string => {
  const v = body[key];
  if (typeof v !== 'string' || v.trim() === '') throw usageError(`${what} is missing`);
  return v;
};
const optionalText = (body: Record<string, unknown>, key: string): string | undefined => (typeof body[key] === 'string' && (body[key] as string).trim() !== '' ? (body[key] as string) : undefined);

/** The doctor report as text, as `doctor` prints it (every secret masked), without colour. */
async function doctorReport(ctx: Context, signal: AbortSignal): Promise<string> {
  let report = '';
  const sink = (into: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        into(chunk.toString('utf8'));
        done();
      },
    });
  const streams = { stdout: sink((s) => (report += s)), stderr: sink(() => undefined), env: ctx.env };
  const inner = new Context(new Output(streams, { json: false, color: false, debug: false }), ctx.options, ctx.env, signal);
  try {
    await doctorCommand(inner, {});
  } finally {
    await inner.close();
  }
  return report;
}

/**
 * `manager`: the license manager page (docs/license-manager.md). Serves it on 127.0.0.1, prints
 * `{"url", "pid"}`, opens the browser through a 0600 redirect file, and runs until no page has
 * been connected for `--idle-minutes`, or until Ctrl-C / SIGTERM. The agent does the licensing;
 * this process holds no license state of its own.
 */
export async function managerCommand(ctx: Context, o: ManagerOptions): Promise<ExitCode> {
  const products = parseProducts(ctx, o.project);
  const config = ctx.inspectionConfig;
  const namespace = config.namespace.value;
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const l of listeners) l();
  };
  const socketPath = await ctx.socketPath();
  const { startAgentDetached } = await import('@plugin-license/agent');
  const startAgent = async (): Promise<number | undefined> => {
    const start = await ctx.agentStart();
    return 'off' in start ? undefined : startAgentDetached({ command: start.command, namespace, socketPath, env: start.env });
  };
  const link = new AgentLink(socketPath, namespace, changed, startAgent);

  // One client of the service for the online computer's steps, made when first needed.
  let serviceClient: ReturnType<Context['client']> | undefined;
  const service = (): ReturnType<Context['client']> => (serviceClient ??= ctx.client(false, { steps: true })); // the page's actions come and go: each has its own deadline
  const viaAgent = async <T>(call: (agent: Awaited<ReturnType<AgentLink['client']>>) => Promise<T>): Promise<T> => call(await link.client());
  const backend: ManagerBackend = {
    snapshot: () => ({
      namespace,
      program: programName(),
      agent: link.view.running ? link.view : { ...link.view, start: agentCommandHint('run', namespace), install: agentCommandHint('install', namespace) },
      products,
      licenses: link.licenses,
    }),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    fail: pageError,
    actions: {
      activate: async (body) => {
        const projectId = ctx.projectId(text(body, 'project_id', 'the project id'));
        const code = ctx.code(text(body, 'code', 'the activation code'));
        return { license: link.record(await viaAgent((a) => a.activate(projectId, code))) };
      },
      deactivate: async (body) => {
        const projectId = ctx.projectId(text(body, 'project_id', 'the project id'));
        return { license: link.record(await viaAgent((a) => a.deactivate(projectId))) };
      },
      refresh: async (body) => {
        const projectId = ctx.projectId(text(body, 'project_id', 'the project id'));
        return { license: link.record(await viaAgent((a) => a.refresh(projectId))) };
      },
      offline_request: async (body) => {
        const projectId = ctx.projectId(text(body, 'project_id', 'the project id'));
        const code = optionalText(body, 'code');
        return viaAgent((a) => a.offlineRequest(projectId, code === undefined ? undefined : ctx.code(code)));
      },
      offline_import: async (body) => ({ license: link.record(await viaAgent((a) => a.offlineImport(text(body, 'document', 'the offline response')))) }),
      // The online computer's step: answered here, as `offline activate` answers it.
      offline_answer: async (body) => {
        const code = optionalText(body, 'code');
        const response = await answerOfflineRequest(text(body, 'document', 'the offline request'), {
          client: service(),
          offlineMaxDays: ctx.config.offlineMaxDays.value,
          ...(code === undefined ? {} : { code: ctx.code(code) }),
        });
        return { document: offlineText(response), file_name: offlineFileName(namespace, response), ...responseFacts(response) };
      },
      // Moving an offline license: this computer forgets it and gives the proof (the agent sees
      // the stored license go within a second); an online computer confirms the proof.
      offline_release: async (body) => {
        const proof = await releaseOffline({ projectId: ctx.projectId(text(body, 'project_id', 'the project id')), ...machineOptions(ctx) });
        return { document: offlineText(proof), file_name: offlineFileName(namespace, proof) };
      },
      offline_confirm: async (body) => {
        return releaseFacts(await confirmOfflineRelease(text(body, 'document', 'the release proof'), { client: service() }));
      },
      report: async (_body, signal) => ({ text: await doctorReport(ctx, signal) }),
    },
  };

  let stop: (why: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  let redirect: string | undefined;
  const removeRedirect = (): void => {
    if (redirect !== undefined) rmSync(redirect, { force: true });
    redirect = undefined;
  };
  const stopSecret = newStopSecret();
  let registration: ManagerRegistration | undefined;
  const server = new ManagerServer({
    port: o.port,
    idleMs: o.idleMinutes * 60_000,
    backend,
    onIdle: () => stop(`no page was open for ${o.idleMinutes} minute${o.idleMinutes === 1 ? '' : 's'}`),
    onSession: removeRedirect,
    log: (line) => ctx.out.note(line),
    stop: { token: stopSecret, onStop: () => stop('asked to stop (manager stop: the program is being uninstalled)') },
  });
  let where: { port: number; url: string };
  try {
    where = await server.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(EXIT.failed, 'port_in_use', `port ${o.port} on 127.0.0.1 is in use; choose another with --port, or --port 0 for any free port`);
    throw err;
  }
  const onAbort = (): void => stop('interrupted');
  ctx.signal.addEventListener('abort', onAbort);
  try {
    // Where `manager stop` finds it (an uninstaller stops it before the program goes), before anything is given out.
    try {
      registration = registerManager(config.paths.cache, where.port, stopSecret);
    } catch (err) {
      throw new CliError(EXIT.failed, 'output_failed', `cannot register the license manager in ${config.paths.cache} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); make that folder writable`);
    }
    await link.connect();
    // The redirect file first: a folder that refuses it ends the command before a url is given out.
    if (o.open) {
      try {
        redirect = writeRedirectFile(config.paths.cache, where.url);
      } catch (err) {
        throw new CliError(EXIT.failed, 'output_failed', `cannot write the page that opens the browser in ${config.paths.cache} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); make that folder writable, or pass --no-open and open the printed url yourself`);
      }
    }
    ctx.out.note(`license manager of '${namespace}' on http://127.0.0.1:${where.port}/ (stops after ${o.idleMinutes} idle minute${o.idleMinutes === 1 ? '' : 's'}, or on Ctrl-C)`);
    let opened: { opened: true } | { opened: false; reason: string } = { opened: false, reason: '--no-open' };
    if (redirect !== undefined) {
      const problem = await openInBrowser(redirect, ctx.env);
      opened = problem === undefined ? { opened: true } : { opened: false, reason: problem };
      if (problem !== undefined) ctx.out.note(`could not open a web browser (${problem}); open ${redirect} in one`);
    }
    // The one line a program embedding the page reads: where it is, whom to stop, and whether a
    // browser shows it (a plugin shows the url to its musician when none could be opened). It
    // comes after the browser was tried, so it can say.
    ctx.out.line(JSON.stringify({ url: where.url, pid: process.pid, ...opened }));
    const why = await stopped;
    ctx.out.note(`license manager stopped: ${why}`);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    removeRedirect();
    registration?.remove();
    link.close();
    await server.close();
  }
  return EXIT.ok;
}

/**
 * `manager stop`: every license manager of this namespace (for this user) stops, asked on its port
 * with the secret it registered (an uninstaller runs it before the agent is stopped and the
 * program removed: a manager would start the agent again). Exit 0 once none runs.
 */
export async function managerStopCommand(ctx: Context): Promise<ExitCode> {
  const folder = ctx.inspectionConfig.paths.cache;
  const done = await stopManagers(folder);
  if (done.running.length > 0) {
    throw new CliError(EXIT.failed, 'manager_running', `the license manager${done.running.length === 1 ? '' : 's'} (process ${done.running.join(', ')}) ${done.running.length === 1 ? 'was' : 'were'} asked to stop but still run${done.running.length === 1 ? 's' : ''}; close its page and run this again`, { stopped: done.stopped });
  }
  if (ctx.out.json) ctx.out.document({ stopped: done.stopped, stale: done.stale });
  else if (done.stopped.length === 0) ctx.out.line('no license manager was running');
  else for (const pid of done.stopped) ctx.out.line(`stopped the license manager (process ${pid})`);
  return EXIT.ok;
}
