import { closeSync, constants as fsConstants, createReadStream, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { codeHint } from '@plugin-license/api';
import {
  answerOfflineRequest,
  confirmOfflineRelease,
  createOfflineRequest,
  generateOfflineKeyPair,
  importOfflineResponse,
  MAX_OFFLINE_FILE_BYTES,
  offlineJson,
  offlineText,
  releaseOffline,
  type OfflineDocument,
  type OfflineReleaseResult,
  type OfflineResponse,
} from '@plugin-license/licensing';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError, type ExitCode } from '../exit.js';
import { carried, nextCommand, shellWord } from '../next-step.js';
import { openOutFile, writeAllAt } from '../out-file.js';
import { when } from '../output.js';
import { nameField, pluginField, projectLabel } from '../plugin-names.js';
import { licenseFields, report, validity } from './license.js';

/** Where a document goes: a new file to carry, or one line of text to copy (docs/offline-activation.md). */
export interface Destination {
  out?: string;
  text?: boolean;
}

/** `offline request --project ID [--code CODE] [--renew]` (and `offline renew`): step 1, on the offline machine. */
export async function requestCommand(ctx: Context, o: Destination & { project: string; code?: string; renew?: boolean }): Promise<ExitCode> {
  const projectId = ctx.projectId(o.project);
  const sink = destination(ctx, o, 'request');
  const request = await sink.during(() =>
    createOfflineRequest({
      projectId,
      ...machineOptions(ctx),
      ...(o.code === undefined ? {} : { code: ctx.code(o.code) }),
      ...(o.renew ? { renew: true } : {}),
    }),
  );
  const where = sink.write(request);
  if (ctx.out.json) {
    ctx.out.document({ type: request.type, project_id: projectId, ...nameField(projectId), machine_id: request.machine_id, machine_name: request.machine_name, renew: request.renew, has_code: request.code !== null, ...where });
    return EXIT.ok;
  }
  const answer = where.file ? responseName(where.file) : undefined;
  const code = request.code === null ? ['--code', 'YOUR-CODE'] : [];
  ctx.out.note(
    `${request.renew ? 'Renewal request' : 'Request'} for project ${projectLabel(projectId)} from ${request.machine_name || 'this machine'} (${request.machine_id}) ${where.file ? `written to ${where.file}` : 'printed above'}.\n` +
      (where.file && answer
        ? `Next, on a computer that is online, with this file: ${nextCommand(ctx, 'elsewhere', 'offline', 'activate', carried(where.file), ...code, '--out', answer)}\n` +
          `then bring ${answer} back here: ${nextCommand(ctx, 'here', 'offline', 'import', answer)}`
        : `Next, on a computer that is online, paste the line into: ${nextCommand(ctx, 'elsewhere', 'offline', 'activate', '-', ...code, '--text')}\n` +
          `then paste the line it prints into this, here: ${nextCommand(ctx, 'here', 'offline', 'import', '-')}`),
  );
  return EXIT.ok;
}

/** `offline activate REQUEST [--code] [--valid-days N] [--sign-key KEYFILE]`: step 2, on any computer that is online. */
export async function answerCommand(ctx: Context, input: string, o: Destination & { code?: string; validDays?: number; signKey?: string }): Promise<ExitCode> {
  const text = await readInput(ctx, input, 'request');
  const key = o.signKey === undefined ? undefined : readPrivateKey(o.signKey);
  // The destination is opened before the service is asked, so a bad --out costs no slot.
  const sink = destination(ctx, o, 'response', 'the service has answered (the slot is taken); answering the same request again takes no second slot, so run the same command again once that is fixed');
  const response = await sink.during(() =>
    ctx.out.spin('asking the service', () =>
      answerOfflineRequest(text, {
        client: ctx.client(false),
        // The signed ticket names the namespace the studio's plugins read (the vendor's).
        namespace: ctx.config.namespace.value,
        offlineMaxDays: ctx.config.offlineMaxDays.value,
        ...(o.validDays === undefined ? {} : { validDays: o.validDays }),
        ...(o.code === undefined ? {} : { code: ctx.code(o.code) }),
        ...(key === undefined ? {} : { signingKeyPem: key.pem, signingKeyName: key.path }),
      }),
    ),
  );
  const where = sink.write(response);
  if (ctx.out.json) {
    ctx.out.document({ ...responseFacts(response), ...where });
    return EXIT.ok;
  }
  ctx.out.fields([
    ...pluginField(response.project_id),
    ['project', response.project_id],
    ['machine', `${response.machine_name || '-'} (${response.machine_id})`],
    ['code', codeHint(response.code)],
    [response.renew ? 'renewed' : 'activated', response.renew ? 'validated; no slot taken' : `${response.activations ?? '?'} of ${response.max_activations ?? '?'} slots in use`],
    ['valid until', when(response.valid_until)],
    ['signed', response.signature ? `yes, key ${response.signature.key_id}` : 'no'],
    ['signed ticket', response.signed_ticket === undefined ? 'none' : `for ${response.machine_id.slice(0, 11)}…, signed by the vendor until ${when(response.valid_until)}`],
  ], where.text === null ? 'stdout' : 'stderr');
  ctx.out.note(
    where.file
      ? `Response written to ${where.file}. Next, on the offline machine, with this file: ${nextCommand(ctx, 'elsewhere', 'offline', 'import', carried(where.file))}`
      : `Response printed above. Next, on the offline machine, paste the line into: ${nextCommand(ctx, 'elsewhere', 'offline', 'import', '-')}`,
  );
  return EXIT.ok;
}

/** `offline import RESPONSE [--project ID]`: step 3, on the offline machine. */
export async function importCommand(ctx: Context, input: string, o: { project?: string }): Promise<ExitCode> {
  const text = await readInput(ctx, input, 'response');
  const state = await importOfflineResponse(text, {
    ...machineOptions(ctx),
    ...(o.project === undefined ? {} : { projectId: ctx.projectId(o.project) }),
    offlinePublicKeys: ctx.config.offlinePublicKeys.value,
    offlineMaxDays: ctx.config.offlineMaxDays.value,
    ticketKeys: ctx.ticketKeys(),
  });
  if (ctx.out.json) {
    await report(ctx, 'imported', state, 'direct');
    return validity(state);
  }
  ctx.out.fields(licenseFields(ctx, state));
  ctx.out.note(await agentHears(ctx, state.projectId));
  return validity(state);
}

/** `offline deactivate --project ID`: release, on the offline machine (it forgets first). */
export async function releaseCommand(ctx: Context, o: Destination & { project: string }): Promise<ExitCode> {
  const projectId = ctx.projectId(o.project);
  const sink = destination(ctx, o, 'release proof', 'this machine has already forgotten the license; asked again, offline deactivate gives the same proof, so run it again once that is fixed');
  const proof = await sink.during(() => releaseOffline({ projectId, ...machineOptions(ctx), ...ctx.testHook }));
  const where = sink.write(proof);
  if (ctx.out.json) {
    ctx.out.document({ type: proof.type, project_id: projectId, ...nameField(projectId), machine_id: proof.machine_id, code_hint: codeHint(proof.code), released_at: proof.released_at, ...where });
    return EXIT.ok;
  }
  ctx.out.note(
    `This machine no longer holds the license of project ${projectLabel(projectId)} (${codeHint(proof.code)}). Release proof ${where.file ? `written to ${where.file}` : 'printed above'}.\n` +
      (where.file
        ? `Next, on a computer that is online, with this file, free the slot: ${nextCommand(ctx, 'elsewhere', 'offline', 'confirm', carried(where.file))}`
        : `Next, on a computer that is online, free the slot by pasting the line into: ${nextCommand(ctx, 'elsewhere', 'offline', 'confirm', '-')}`),
  );
  return EXIT.ok;
}

/** `offline confirm PROOF`: release, on any computer that is online. */
export async function confirmCommand(ctx: Context, input: string): Promise<ExitCode> {
  const text = await readInput(ctx, input, 'release proof');
  const r = await ctx.out.spin('asking the service', () => confirmOfflineRelease(text, { client: ctx.client(false) }));
  if (ctx.out.json) {
    ctx.out.document(releaseFacts(r));
    return EXIT.ok;
  }
  const slots = r.activations === null ? '' : `; ${r.activations} of ${r.maxActivations} slots now in use`;
  ctx.out.line(
    r.released
      ? `Released the slot of ${r.machineName || 'the machine'} (${r.machineId}) for ${r.codeHint}${slots}.`
      : `Already released: ${r.machineName || 'the machine'} (${r.machineId}) holds no slot of ${r.codeHint} any more${slots}.`,
  );
  return EXIT.ok;
}

/**
 * `offline keygen --out FILE` and `relay keygen --out FILE`: a vendor's Ed25519 key pair, for
 * signed offline responses or for the relay's signed tickets (one kind of key; the note says where
 * each half goes).
 */
export async function keygenCommand(ctx: Context, o: { out: string }, use: 'offline' | 'relay' = 'offline'): Promise<ExitCode> {
  const path = resolve(o.out);
  const pair = generateOfflineKeyPair();
  const fd = openOutFile(path);
  try {
    writeSync(fd, pair.privateKeyPem);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (ctx.out.json) {
    ctx.out.document({ private_key_file: path, public_key: pair.publicKey, key_id: pair.keyId });
    return EXIT.ok;
  }
  ctx.out.fields([
    ['private key', `${path} (mode 0600; keep it on your support machines only)`],
    ['public key', pair.publicKey],
    ['key id', pair.keyId],
  ]);
  if (use === 'relay') {
    ctx.out.note(`Give the relay the private key (RELAY_SIGNING_KEY="$(cat ${shellWord(path)})"; on a platform, as a secret), and build your plugins and installers with the public key (the module's Settings ticketKeys, pnpm package --ticket-key ${pair.publicKey}).`);
  } else {
    ctx.out.note(`Put the public key in your apps' configuration ("offline_public_keys": ["${pair.publicKey}"] in config.json, or offlinePublicKeys), then sign responses with: ${nextCommand(ctx, 'here', 'offline', 'activate', 'request.json', '--sign-key', path, '--out', 'response.json')}`);
  }
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------

/** Whether the running agent (if any) answers plugins with the imported license yet: it should within a second. */
async function agentHears(ctx: Context, projectId: string): Promise<string> {
  const agent = await ctx.agent(500).catch((err: unknown) => (err as { code?: unknown }).code === 'socket_dir_unsafe' ? (err as Error) : undefined);
  // Imported all the same (by the library); what plugins cannot hear is said in the check's own words.
  if (agent instanceof Error) return `Imported. Plugins cannot be told through the agent: ${agent.message}`;
  if (agent === undefined) return 'Imported. No agent answers for this namespace; plugins see the license when it starts.';
  const deadline = Date.now() + 2000;
  for (;;) {
    const s = await agent.check(projectId).catch(() => undefined);
    if (s?.source === 'offline') return 'Imported. The running agent answers plugins with it now.';
    if (Date.now() > deadline) return 'Imported. The running agent has not picked it up yet; restart it if plugins still say not activated.';
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An answered request as `offline activate --json` and the license manager say it: the code as a hint. */
export function responseFacts(response: OfflineResponse) {
  return {
    type: response.type,
    project_id: response.project_id,
    ...nameField(response.project_id),
    machine_id: response.machine_id,
    machine_name: response.machine_name,
    code_hint: codeHint(response.code),
    renew: response.renew,
    activations: response.activations,
    max_activations: response.max_activations,
    valid_until: response.valid_until,
    signed_by: response.signature?.key_id ?? null,
    signed_ticket: response.signed_ticket !== undefined,
  };
}

/** A confirmed release proof as `offline confirm --json` and the license manager say it. */
export function releaseFacts(r: OfflineReleaseResult) {
  return {
    project_id: r.projectId,
    ...nameField(r.projectId),
    machine_id: r.machineId,
    machine_name: r.machineName,
    code_hint: r.codeHint,
    released: r.released,
    already_released: r.alreadyReleased,
    activations: r.activations,
    max_activations: r.maxActivations,
  };
}

/** Where this namespace's offline state lives (the library's options). */
export function machineOptions(ctx: Context): { namespace: string; home?: string } {
  return { namespace: ctx.config.namespace.value, ...(ctx.config.home.value === undefined ? {} : { home: ctx.config.home.value }) };
}

interface Sink {
  /** Writes the document where it goes; says where. */
  write(doc: OfflineDocument): { file: string | null; text: string | null };
  /** Runs the step that makes the document; if it fails, the file opened for it is removed. */
  during<T>(step: () => Promise<T>): Promise<T>;
}

/** Opens the destination before anything happens, so a bad --out path changes nothing. */
/** Room reserved in an --out file before the step that fills it: an offline document is a few KiB. */
const RESERVED_BYTES = 16 * 1024;

/**
 * Where a document goes. An --out file is created and given room before the step that makes the
 * document (which may take a slot), so a bad path or a full disk costs nothing; the document then
 * fills that room. `done` says what already happened, for a write that fails after the step.
 */
function destination(ctx: Context, o: Destination, what: string, done?: string): Sink {
  if (o.out !== undefined && o.text) throw usageError(`--out and --text exclude each other: the ${what} goes either to a file or on one line of text`);
  if (o.out === undefined && !o.text) throw usageError(`say where the ${what} goes: --out FILE (a file to carry) or --text (one line to copy and paste)`);
  const after = (err: unknown, where: string): never => {
    const code = (err as CliError).details?.system_code ?? (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new CliError(EXIT.failed, 'output_failed', `could not write the ${what} to ${where} (${String(code)})${done ? `; ${done}` : ''}`, { system_code: code });
  };
  if (o.text) {
    return {
      write: (doc) => {
        // The line alone on stdout (inside the one document with --json), so it can be copied or piped.
        const text = offlineText(doc);
        try {
          if (!ctx.out.json) ctx.out.line(text);
        } catch (err) {
          return after(err, 'standard output');
        }
        return { file: null, text };
      },
      during: (step) => step(),
    };
  }
  const path = resolve(o.out as string);
  const fd = openOutFile(path);
  let open = true;
  const discard = (): void => {
    if (!open) return;
    open = false;
    closeSync(fd);
    rmSync(path, { force: true });
  };
  try {
    writeAllAt(fd, Buffer.alloc(RESERVED_BYTES, 0x20), 0);
    fsyncSync(fd);
  } catch (err) {
    discard();
    throw usageError(`cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); free some space or choose another --out file (nothing was done)`);
  }
  return {
    write: (doc) => {
      try {
        const bytes = Buffer.from(offlineJson(doc));
        writeAllAt(fd, bytes, 0);
        ftruncateSync(fd, bytes.length);
        fsyncSync(fd);
        closeSync(fd);
        open = false;
      } catch (err) {
        discard();
        return after(err, path);
      }
      return { file: path, text: null };
    },
    during: async (step) => {
      try {
        return await step();
      } catch (err) {
        discard();
        throw err;
      }
    },
  };
}



/** A file path, `-` for standard input, or the line itself. */
/**
 * An offline document given as a file, the line itself, or - (standard input). Bounded by what
 * is read, not by what the file system says (a device or a pipe has no size): reading stops past
 * the largest offline document. A wait for input (a pipe with no writer yet, a terminal) ends on
 * Ctrl-C.
 */
async function readInput(ctx: Context, input: string, what: string): Promise<string> {
  // Not a file, and long and made of base64url: the line itself (whole or not: parsing says which).
  if (input !== '-' && /^[A-Za-z0-9_.\s-]{40,}$/.test(input) && !existsSync(input)) return input;
  const path = input === '-' ? 'standard input' : resolve(input);
  let source: NodeJS.ReadableStream & { destroy(): void } | undefined;
  const read = async (): Promise<string> => {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      source = input === '-' ? process.stdin : openSource(path);
      for await (const chunk of source as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_OFFLINE_FILE_BYTES) throw usageError(`${path} is far larger than an offline ${what} (over ${MAX_OFFLINE_FILE_BYTES / 1024} KiB read); give the ${what} file`);
        chunks.push(chunk);
      }
    } catch (err) {
      if ((err as { exit?: unknown }).exit !== undefined) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw usageError(`no such file ${path}; give the ${what} file, the line itself, or - to read it from standard input`);
      throw usageError(`cannot read ${path} (${code ?? (err as Error).message})`);
    }
    return Buffer.concat(chunks).toString('utf8');
  };
  // Ctrl-C ends the wait at once, even while the system still waits for a writer.
  let stop: () => void = () => undefined;
  const interrupted = new Promise<never>((_resolve, reject) => {
    stop = () => reject(new CliError(EXIT.interrupted, 'interrupted', `interrupted while waiting for the ${what} from ${path}; nothing was done`));
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([read(), interrupted]);
  } finally {
    ctx.signal.removeEventListener('abort', stop);
    interrupted.catch(() => undefined);
    source?.destroy();
  }
}

/**
 * A file to read: a named pipe is read through the event loop (opened without blocking), so a
 * wait for its writer holds no thread and ends when the command does; anything else as a stream.
 */
function openSource(path: string): NodeJS.ReadableStream & { destroy(): void } {
  if (process.platform !== 'win32' && statSync(path).isFIFO()) {
    const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    return new Socket({ fd, readable: true, writable: false });
  }
  return createReadStream(path);
}

/** The signing key, refused when others can read it (as ssh does). */
function readPrivateKey(file: string): { pem: string; path: string } {
  const path = resolve(file);
  let pem: string;
  try {
    const st = statSync(path);
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw usageError(`the signing key ${path} can be read by other users (mode ${(st.mode & 0o777).toString(8)}); run chmod 600 ${shellWord(path)}`);
    }
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as { exit?: unknown }).exit !== undefined) throw err;
    throw usageError(`cannot read the signing key ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return { pem, path };
}

/** The response file to suggest for a request file: its name with "request" turned into "response". */
function responseName(requestFile: string): string {
  const name = carried(requestFile);
  return /request/i.test(name) ? name.replace(/request/i, (m) => (m === 'REQUEST' ? 'RESPONSE' : m[0] === 'R' ? 'Response' : 'response')) : 'response.json';
}
