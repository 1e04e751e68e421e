import type { Context } from '../../context.js';
import { EXIT, type ExitCode } from '../../errors.js';
import { agent } from './checks/agent.js';
import { clock } from './checks/clock.js';
import { configuration, doctorConfig } from './checks/configuration.js';
import { dataFolder } from './checks/data-folder.js';
import { licenses, readLicenses } from './checks/licenses.js';
import { machineId } from './checks/machine-id.js';
import { relay } from './checks/relay.js';
import { service } from './checks/service.js';
import { token } from './checks/token.js';
import { versions } from './checks/versions.js';
import { render } from './render.js';
import type { Check, Facts } from './report.js';

/**
 * `doctor [--project ID]`: one report for a support ticket, every secret masked, each check
 * ok, warning or failed with what to do, in the order of docs/cli.md. It goes on past every failure
 * (a broken config file, an unreachable service) to the end, since support needs the rest most
 * then; it asks the service about each license when it can (the cache may be behind); and it
 * changes nothing. Exit 0 when nothing failed.
 */
export async function doctorCommand(ctx: Context, o: { project?: string }): Promise<ExitCode> {
  const checks: Check[] = [];
  const facts: Facts = {};
  const add = (c: Check): void => void checks.push(c);
  const projectId = o.project === undefined ? undefined : ctx.projectId(o.project);

  versions(facts, add);
  const config = doctorConfig(ctx, add);
  if (config) {
    const cached = await readLicenses(config, add);
    configuration(config, cached, facts, add);
    const probe = await service(ctx, config, facts, add);
    await relay(ctx, config, facts, add);
    await token(ctx, config, probe, add);
    clock(probe, facts, add);
    await machineId(ctx, config, facts, add);
    await dataFolder(config, add);
    await licenses(ctx, config, cached, projectId, probe?.isService === true, facts, add);
    await agent(ctx, projectId, facts, add);
  }

  const { failed } = render(ctx.out, checks, facts);
  return failed === 0 ? EXIT.ok : EXIT.failed;
}
