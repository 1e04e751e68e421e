import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '@plugin-license/fs';
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

/** Writes the whole state through the one atomic writer (temp file, fsync, rename; mode 0600: it holds the signing key). */
export async function writeDataFile(file: string, data: EmulatorData): Promise<void> {
  try {
    await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
  } catch (error) {
    throw new EmulatorError('data_file_unwritable', `cannot write the data file ${file}: ${(error as Error).message}; check the folder exists and is writable`, {
      cause: error,
      context: { file },
    });
  }
}
