// A named import lets the bundler inline just this field, not the whole package.json.
import { version as packageVersion } from '../package.json';

/** This package's version, sent in the default `User-Agent`. */
export const version: string = packageVersion;
