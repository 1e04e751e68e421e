// The folder a vendor's installers put the program in (`~/.local/lib/<vendor>`, `%LOCALAPPDATA%\Programs\<vendor>`,
// `~/Library/Application Support/<vendor>`): shared by every product installer of the vendor, each
// known by its product id. The rules here are shared by `pnpm package` (refused at build time) and
// the program's `plugins install` (refused again on the customer's computer). No dependencies but
// Node's own.

/** The platforms an installer is built for, as Node names them. */
export type InstallerPlatform = 'linux' | 'win32' | 'darwin';

/** The longest product id, in characters. */
export const MAX_PRODUCT_ID_LENGTH = 40;

/** A product id: lower-case ASCII letters and digits in runs joined by single dashes. */
const PRODUCT_ID_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The id of the products a previous release's installer placed (its one record, `installed-plugins.json`)
 * when the installer of this release that found it is not their product: kept apart, under this
 * id, until their own uninstaller removes them. No product of a vendor may take it.
 */
export const EARLIER_PRODUCT_ID = 'earlier-installer';

/**
 * Why `id` cannot be a product id, or undefined when it can: 1 to 40 lower-case ASCII letters and
 * digits in runs joined by single dashes (`acme-gain`), so it is the same file name on every
 * platform, whatever its case rules, and one shell word; not the id kept for an earlier release's
 * plugins ({@link EARLIER_PRODUCT_ID}).
 *
 * @example
 * productIdProblem('acme-gain'); // undefined
 * productIdProblem('Acme Gain'); // 'use lower-case letters and digits joined by single dashes (acme-gain)'
 */
export function productIdProblem(id: string): string | undefined {
  if (id === '') return 'it is empty';
  if (id.length > MAX_PRODUCT_ID_LENGTH) return `it is ${id.length} characters long (at most ${MAX_PRODUCT_ID_LENGTH})`;
  if (!PRODUCT_ID_PATTERN.test(id)) return 'use lower-case letters and digits joined by single dashes (acme-gain)';
  if (id === EARLIER_PRODUCT_ID) return `${EARLIER_PRODUCT_ID} is kept for the plugins of an earlier release's installer`;
  return undefined;
}

/**
 * The product id a product name gives when no id is chosen: its ASCII letters and digits,
 * lower-cased, each run of anything else one dash (`Acme Gain` → `acme-gain`); undefined when that
 * leaves nothing usable (a name in another script: choose an id then).
 *
 * @example
 * productIdOf('Acme Gain 2'); // 'acme-gain-2'
 * productIdOf('音'); // undefined
 */
export function productIdOf(product: string): string | undefined {
  const id = product.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, MAX_PRODUCT_ID_LENGTH).replace(/-+$/, '');
  return productIdProblem(id) === undefined ? id : undefined;
}

/** The program's file name on a platform (`acme-license`, `acme-license.exe`). */
export function programFile(platform: InstallerPlatform, name: string): string {
  return platform === 'win32' ? `${name}.exe` : name;
}

/** A name the installer reserves: exactly, or any name with this start and end. */
type Reserved = { exactly: string; why: string; self?: true } | { starts: string; ends: string; why: string };

/**
 * The names the installers and the program reserve in the program's folder on `platform` (and in
 * the Linux download beside it), the program `program` (its file name, from {@link programFile})
 * included: the uninstallers, the plugins' records and their lock, the log, an interrupted
 * install's copies; on macOS also the data the agent keeps there (the folder is the namespace's
 * data folder). The one list: `pnpm package` refuses a `--name` or a Standalone that takes one,
 * and `plugins install` refuses such a Standalone again.
 */
function reservedNames(platform: InstallerPlatform, program: string): Reserved[] {
  // The program's own names only when it is known (`plugins install` under plain Node has none).
  const own = (entries: Reserved[]): Reserved[] => (program === '' ? [] : entries);
  const records: Reserved[] = [
    ...own([{ exactly: program, why: 'the program itself', self: true }]),
    { exactly: 'installed-plugins', why: "the records of each product's plugins" },
    { starts: 'installed-plugins.json', ends: '', why: "the record of an earlier release's plugins" },
    { exactly: 'config.json', why: "the program's settings file" },
  ];
  if (platform === 'win32') {
    return [
      ...records,
      { exactly: 'uninstall.exe', why: "an earlier release's uninstaller" },
      { starts: 'uninstall-', ends: '.exe', why: "a product's uninstaller" },
      { exactly: 'install.log', why: "the installer's log" },
      ...own([
        { exactly: program.replace(/\.exe$/i, '.new.exe'), why: "the program's copy during an install" },
        { starts: program.replace(/\.exe$/i, '.old-'), ends: '.exe', why: 'the previous program, renamed aside by an upgrade' },
      ]),
    ];
  }
  const unix: Reserved[] = [
    ...records,
    { exactly: 'install.sh', why: 'the installer' },
    { exactly: 'uninstall.sh', why: "the uninstaller in the download, and an earlier release's" },
    { starts: 'uninstall-', ends: '.sh', why: "a product's uninstaller" },
    { exactly: 'plugins', why: "the download's folder of plugins" },
  ];
  if (platform === 'linux') return unix;
  return [
    ...unix,
    { exactly: 'agent.sock', why: "the agent's socket" },
    { exactly: 'agent.sock.lock', why: "the agent's socket's lock" },
    { exactly: 'licenses', why: 'the license data' },
    { exactly: 'tickets', why: "the plugins' tickets" },
    { exactly: 'offline', why: 'the offline activations' },
  ];
}

/**
 * What `candidate` would collide with if it were a file of the vendor's (a Standalone, or the
 * program itself with `asProgram`) in the program's folder on `platform`, or undefined when it
 * would not: a name the installers or the program reserve there ({@link reservedNames}),
 * compared as the platform compares names (regardless of case on Windows and macOS). Returns the
 * reserved name and why it is taken, for a message.
 *
 * @example
 * reservedNameConflict('linux', 'acme-license', 'uninstall.sh'); // "uninstall.sh (the uninstaller …)"
 * reservedNameConflict('win32', 'acme-license.exe', 'Acme-License.EXE'); // 'acme-license.exe (the program itself)'
 */
export function reservedNameConflict(platform: InstallerPlatform, program: string, candidate: string, options: { asProgram?: boolean } = {}): string | undefined {
  const fold = (s: string): string => (platform === 'linux' ? s : s.toLowerCase());
  const name = fold(candidate);
  for (const r of reservedNames(platform, program)) {
    if (options.asProgram === true && 'self' in r) continue;
    if ('exactly' in r ? name === fold(r.exactly) : name.length >= r.starts.length + r.ends.length && name.startsWith(fold(r.starts)) && name.endsWith(fold(r.ends))) {
      return `${'exactly' in r ? r.exactly : `${r.starts}…${r.ends}`} (${r.why})`;
    }
  }
  return undefined;
}
