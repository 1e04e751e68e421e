import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { selfCommand } from '@plugin-license/agent';
import { getMachineId, type ResolvedConfig } from '@plugin-license/licensing';
import type { Context } from '../../../context.js';
import { classify } from '../../../errors.js';
import type { Add, Facts } from '../report.js';

export async function machineId(ctx: Context, config: ResolvedConfig, facts: Facts, add: Add): Promise<void> {
  const section = 'machine id';
  const opts = { namespace: config.namespace.value, ...(config.home.value === undefined ? {} : { home: config.home.value }) };
  let first;
  try {
    first = await getMachineId(opts);
  } catch (err) {
    add({ section, name: 'id', level: 'failed', detail: classify(err).message });
    return;
  }
  const machine: NonNullable<Facts['machine']> = { id: first.id, source: first.source, stable: null };
  facts.machine = machine;
  add({ section, name: 'id', level: 'info', detail: `${first.id} (source: ${first.source})` });
  // A second derivation in a fresh process, as the next start of a plugin host would do.
  try {
    const [command, ...self] = selfCommand();
    const args = [...self, '--json', '--app', config.namespace.value, ...(config.home.value === undefined ? [] : ['--home', config.home.value]), 'machine-id'];
    const { stdout } = await promisify(execFile)(command!, args, { timeout: 15_000, env: { ...process.env, ...ctx.env } as NodeJS.ProcessEnv });
    const second = (JSON.parse(stdout) as { machine_id: string }).machine_id;
    machine.stable = second === first.id;
    add(second === first.id
      ? { section, name: 'stable', level: 'ok', detail: 'the same id from a second derivation in a new process' }
      : { section, name: 'stable', level: 'failed', detail: `a second derivation gave ${second}`, fix: 'the OS id changes between runs (a cloned VM or container?); licenses will not stay bound: pass a fixed machine id' });
  } catch (err) {
    add({ section, name: 'stable', level: 'warning', detail: `could not derive it again (${(err as Error).message.split('\n')[0]})` });
  }
}
