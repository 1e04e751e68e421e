import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A private X display for the plugin's panel: Xvfb picks a free display number and writes it on
 * fd 3 once it accepts clients (`-displayfd`), so nothing polls or guesses. Kill `display` after.
 */
export async function startXvfb(): Promise<{ display: ChildProcess; name: string }> {
  const display = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1024x768x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  const name = await new Promise<string>((resolve, reject) => {
    let got = '';
    (display.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
      got += d.toString();
      if (got.includes('\n')) resolve(`:${got.trim()}`);
    });
    display.once('exit', (c) => reject(new Error(`Xvfb exited (${c})`)));
  });
  return { display, name };
}
