import { LicenseError } from './errors.js';
import { executableInfo } from './executable.js';

/** An app group id as Apple's entitlement names it: `TEAMID.group.name` (macOS), letters, digits, `.` and `-`. */
export const APP_GROUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9.-]{2,127}$/;

/** Throws `invalid_argument` for an app group that can't be a folder name of Group Containers. */
export function checkAppGroup(group: string, where: string): void {
  if (!APP_GROUP_PATTERN.test(group)) {
    throw new LicenseError('invalid_argument', `${where} must be an app group id such as ABCDE12345.com.acme.audio (letters, digits, . and -), got ${JSON.stringify(group.slice(0, 80))}`);
  }
}

/** Where the app group in effect came from. */
export type AppGroupSource = 'environment' | 'config file' | 'executable' | 'default';

/**
 * The macOS app group in effect, by the one rule: `PLUGIN_LICENSE_APP_GROUP` (not blank) >
 * `"app_group"` of `config.json` > the group baked into the executable (`pnpm package
 * --app-group`) > none. Checked: a value that cannot be a Group Containers folder name is
 * `invalid_argument` naming where it came from. The socket path and the data folder both follow it.
 *
 * @example
 * chooseAppGroup({ PLUGIN_LICENSE_APP_GROUP: 'ABCDE12345.com.acme.audio' }, undefined, 'config.json').value; // 'ABCDE12345.com.acme.audio'
 */
export function chooseAppGroup(env: Readonly<Record<string, string | undefined>>, fileValue: unknown, configFile: string): { value: string | undefined; source: AppGroupSource } {
  const fromEnv = env.PLUGIN_LICENSE_APP_GROUP;
  let chosen: { value: string | undefined; source: AppGroupSource };
  if (fromEnv !== undefined && fromEnv.trim() !== '') chosen = { value: fromEnv, source: 'environment' };
  else if (fileValue !== undefined) {
    if (typeof fileValue !== 'string') throw new LicenseError('invalid_argument', `"app_group" in ${configFile} must be a string`);
    chosen = fileValue.trim() === '' ? baked() : { value: fileValue, source: 'config file' };
  } else chosen = baked();
  if (chosen.value !== undefined) {
    checkAppGroup(chosen.value, chosen.source === 'environment' ? 'PLUGIN_LICENSE_APP_GROUP' : chosen.source === 'executable' ? 'the app group built into this program' : `"app_group" in ${configFile}`);
  }
  return chosen;
}

function baked(): { value: string | undefined; source: AppGroupSource } {
  const group = executableInfo()?.appGroup;
  return group === undefined ? { value: undefined, source: 'default' } : { value: group, source: 'executable' };
}
