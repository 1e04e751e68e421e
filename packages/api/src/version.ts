import pkg from '../package.json' with { type: 'json' };

/** This package's version, sent in the default `User-Agent`. */
export const version: string = pkg.version;
