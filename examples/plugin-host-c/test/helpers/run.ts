import { run } from '@plugin-license/test-utils';

export { run, spawnLines, type LineProcess, type RunResult } from '@plugin-license/test-utils';

/** Polls `read` until it gives a value; bounded (the bound is on failing only, never a window to hit). */
export async function until<T>(read: () => T | undefined, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs plc-check (time-out 5 s unless given) and parses its JSON lines. */
export async function plcCheck(
  bin: string,
  socket: string,
  projectId: string,
  options: { timeoutMs?: number; repeat?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; answers: Record<string, unknown>[] }> {
  // A generous default time-out: a loaded CI machine must not turn an answer into a time-out.
  const args = [socket, projectId, String(options.timeoutMs ?? 5000)];
  if (options.repeat !== undefined) args.push(String(options.repeat));
  const r = await run(bin, args, options.env);
  const answers = r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.code, answers };
}

