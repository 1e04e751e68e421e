import type { ResolvedConfig } from '@plugin-license/licensing';
import type { Context } from '../../../context.js';
import { classify } from '../../../errors.js';
import { when } from '../../../output.js';
import { jwtExpiry } from '../format.js';
import type { Add } from '../report.js';
import type { Probe } from './service.js';

export async function token(ctx: Context, config: ResolvedConfig, probe: Probe | undefined, add: Add): Promise<void> {
  const section = 'token';
  const value = config.token.value;
  if (value === undefined) {
    add({ section, name: 'token', level: 'warning', detail: 'not set; vendor commands (keys, generate, usage) need it', fix: 'set PLUGIN_LICENSE_TOKEN or put "token" in the config file' });
    return;
  }
  const exp = jwtExpiry(value);
  if (exp === null) add({ section, name: 'form', level: 'info', detail: 'present, opaque (not a JWT; no expiry to read)' });
  else if (exp === undefined) add({ section, name: 'form', level: 'warning', detail: 'present, a JWT without an expiry', fix: 'ask for a token with an expiry' });
  else if (exp <= Date.now()) add({ section, name: 'expiry', level: 'failed', detail: `expired ${when(new Date(exp))}`, fix: 'get a new token from the portal' });
  else add({ section, name: 'expiry', level: exp - Date.now() < 7 * 86_400_000 ? 'warning' : 'ok', detail: `expires ${when(new Date(exp))}`, fix: 'get a new token soon' });
  if (!probe?.isService) return; // the service checks above say why
  try {
    await ctx.client(true, { retry: false, config }).builds.usage();
    add({ section, name: 'accepted', level: 'ok', detail: 'an authenticated request succeeded' });
  } catch (err) {
    const f = classify(err);
    const refused = f.code === 'unauthorized' || f.code === 'forbidden';
    add({ section, name: 'accepted', level: refused ? 'failed' : 'warning', detail: f.message, ...(refused ? { fix: 'get a new token from the portal' } : { fix: 'see the service checks above' }) });
  }
}
