import packageJson from '../package.json';

/** This package's version, as `hello` reports it. */
export const AGENT_VERSION: string = packageJson.version;
