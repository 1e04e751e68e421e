import { access, constants, stat, statfs } from 'node:fs/promises';
import type { ResolvedConfig } from '@plugin-license/licensing';
import { formatBytes } from '../../../output.js';
import type { Add } from '../report.js';

export async function dataFolder(config: ResolvedConfig, add: Add): Promise<void> {
  const section = 'data folder';
  const dir = config.paths.data;
  let st;
  try {
    st = await stat(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    add(code === 'ENOENT'
      ? { section, name: 'path', level: 'info', detail: `${dir} (not created yet: nothing has been activated here)` }
      : { section, name: 'path', level: 'failed', detail: `${dir}: ${code}`, fix: 'check the folder\'s permissions' });
    return;
  }
  const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
  const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
  add({ section, name: 'path', level: 'info', detail: dir });
  add({ section, name: 'owner and permissions', level: mine ? ((st.mode & 0o022) !== 0 ? 'warning' : 'ok') : 'warning', detail: `uid ${st.uid}, mode ${mode}`, fix: mine ? 'others can write here: chmod go-w the folder' : 'the folder belongs to another user: run as its owner, or fix the owner' });
  try {
    await access(dir, constants.W_OK);
  } catch {
    add({ section, name: 'writable', level: 'failed', detail: 'this user cannot write here', fix: 'fix the folder permissions; activation needs to store its state here' });
  }
  try {
    const fs = await statfs(dir);
    const free = fs.bavail * fs.bsize;
    add({ section, name: 'free space', level: free < 50 * 1024 * 1024 ? 'warning' : 'ok', detail: formatBytes(free), fix: 'free some disk space: the license state needs a few kilobytes, but a full disk fails every write' });
  } catch {
    // statfs is not everywhere; nothing to report then
  }
}
