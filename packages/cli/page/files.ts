// Files the musician saves or picks: the offline documents.
import { PageError } from './api.js';

/** Saves text as a file the browser downloads. */
export function download(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text.endsWith('\n') ? text : `${text}\n`], { type: 'text/plain' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** An offline file is a few KiB; anything far larger is the wrong file (and is not read whole). */
const MAX_FILE_BYTES = 64 * 1024;

export async function readSmallFile(input: HTMLInputElement | null, what: string): Promise<string> {
  const file = input?.files?.[0];
  if (!file) throw new PageError('no_file', `Choose the ${what} first.`);
  if (file.size > MAX_FILE_BYTES) throw new PageError('too_large', `${file.name} is far larger than an ${what}: choose the ${what}.`);
  return file.text();
}
