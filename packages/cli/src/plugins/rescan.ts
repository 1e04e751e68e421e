import type { PluginPlatform } from './places.js';

/** "A, B and C". */
function listed(names: string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/**
 * The one line after an install that tells a musician what a host may need: most hosts find new
 * plugins when they start, a few need a manual rescan (named here, per platform). Undefined when
 * no plugin a host loads was placed (a Standalone alone).
 *
 * @example
 * rescanLine('linux', ['Acme Gain']);
 * // 'Rescan plugins in your music software if it does not list Acme Gain: most find new plugins when they start; FL Studio and Ardour need a manual rescan.'
 */
export function rescanLine(platform: PluginPlatform, products: string[]): string | undefined {
  const names = [...new Set(products)];
  if (names.length === 0) return undefined;
  const hosts = platform === 'darwin' ? 'Logic Pro and GarageBand check new Audio Units when they start; FL Studio and Ardour need a manual rescan' : 'most find new plugins when they start; FL Studio and Ardour need a manual rescan';
  return `Rescan plugins in your music software if it does not list ${listed(names)}: ${hosts}.`;
}
