export { startEmulator } from './emulator.js';
export type { Emulator, EmulatorOptions } from './emulator.js';
export { EmulatorError, isEmulatorError } from './errors.js';
export type { EmulatorErrorCode } from './errors.js';
export { DEFAULT_RATE_LIMITS } from './rate-limiter.js';
export type { RateLimits } from './rate-limiter.js';
export { BODY_LIMIT_BYTES } from './app.js';
export { CODE_PATTERN } from './code-format.js';
export { isLoopbackHost } from './loopback.js';
