import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { renameRetrying } from '@plugin-license/api';
import { EmulatorError } from './errors.js';
import { EmulatorData } from './state.js';

/** Reads a `--data` file; undefined when it does not exist yet. A file that is not ours is refused, never overwritten. */
export async function loadDataFile(file: string): Promise<EmulatorData | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new EmulatorError('data_file_invalid', `cannot read the data file ${file}: ${(error as Error).message}; check its permissions`, {
      cause: error,
      context: { file },
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new EmulatorError('data_file_invalid', `the data file ${file} is not valid JSON; delete it or pass another --data file`, {
      cause: error,
      context: { file },
    });
  }
  const parsed = EmulatorData.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(root)';
    throw new EmulatorError(
      'data_file_invalid',
      `the data file ${file} is not an emulator data file (field ${field}: ${issue?.message ?? 'invalid'}); delete it or pass another --data file`,
      { cause: parsed.error, context: { file, field } },
    );
  }
  return parsed.data;
}

/** Writes the whole state atomically: temp file in the same folder, fsync, rename. Mode 0600: it holds the signing key. */
export async function writeDataFile(file: string, data: EmulatorData): Promise<void> {
  const text = `${JSON.stringify(data, null, 2)}\n`;
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(dirname(file), { recursive: true });
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    // A scanner may hold the fresh file on Windows: the one rename rule retries it.
    await renameRetrying(tmp, file);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw new EmulatorError('data_file_unwritable', `cannot write the data file ${file}: ${(error as Error).message}; check the folder exists and is writable`, {
      cause: error,
      context: { file },
    });
  }
}
