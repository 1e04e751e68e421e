export { run, CLI_VERSION } from './program.js';
export { EXIT, CliError, classify } from './errors.js';
export type { ExitCode, Classified } from './errors.js';
export type { Streams } from './output.js';
