import { run } from '@plugin-license/test-utils';

export { run, spawnLines, type LineProcess, type RunResult } from '@plugin-license/test-utils';

/**
 * vi.waitFor's bound for these tests (its default is 1 s): a bound on failing only, never a window
 * to hit, so it is generous enough for a loaded machine; expect.poll's is the root config's.
 */
export const WAIT = { timeout: 20_000, interval: 20 };

/** Each line of a tool's standard output as JSON (plc-check, plc-flood print one object a line). */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Runs plc-check with any arguments (a verb and its operands) and parses its JSON lines. */
export async function plc(
  bin: { plcCheck: string },
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; answers: Record<string, unknown>[] }> {
  const r = await run(bin.plcCheck, args, env, 30_000);
  return { code: r.code, answers: jsonLines(r.stdout) };
}

/** One `check` by plc-check (time-out 5 s unless given), parsed. */
export function plcCheck(
  bin: { plcCheck: string },
  socket: string,
  projectId: string,
  options: { timeoutMs?: number; repeat?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; answers: Record<string, unknown>[] }> {
  // A generous default time-out: a loaded CI machine must not turn an answer into a time-out.
  const args = [socket, projectId, String(options.timeoutMs ?? 5000)];
  if (options.repeat !== undefined) args.push(String(options.repeat));
  return plc(bin, args, options.env);
}
