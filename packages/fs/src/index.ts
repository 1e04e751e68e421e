export { renameRetrying, renameRetryingSync, RENAME_RETRY_MS } from './rename-retry.js';
export type { RenameEnvironment } from './rename-retry.js';
export { writeFileAtomic, probeWritable, sweepTempFiles } from './atomic-write.js';
export { ensureDir } from './ensure-dir.js';
export { removeFileDurably, syncDir } from './durable.js';
export { moveAside, moveAsideSync } from './move-aside.js';
