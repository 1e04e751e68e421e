import Table from 'cli-table3';
import pc from 'picocolors';
import yoctoSpinner from 'yocto-spinner';
import { programName } from '@plugin-license/licensing/executable';
import { setTimeout as delay } from 'node:timers/promises';
import { CliError, EXIT, OUTPUT_REPORTED, outputFailed, type Classified } from './exit.js';

/** Where output goes; the tests and embedders pass their own streams. */
export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Everything the commands print goes through here, so the rules of docs/cli.md hold in one place:
 * with `--json`, stdout gets exactly one JSON document and nothing else; colour only on a TTY
 * and without `NO_COLOR` or `--no-color`; spinners and progress only when stderr is a TTY.
 */
export class Output {
  readonly json: boolean;
  readonly color: boolean;
  readonly interactive: boolean;
  readonly debug: boolean;
  readonly c: ReturnType<typeof pc.createColors>;
  #documentWritten = false;
  #stdoutFailed = false;

  constructor(
    readonly streams: Streams,
    options: { json: boolean; color: boolean; debug: boolean },
  ) {
    this.json = options.json;
    const noColor = streams.env.NO_COLOR !== undefined && streams.env.NO_COLOR !== '';
    const plain = !options.color || noColor || streams.env.TERM === 'dumb';
    this.color = !plain && streams.stdout.isTTY === true;
    // Spinners and progress bars are escape codes too: only for a person at a terminal asking for them.
    this.interactive = !plain && streams.stderr.isTTY === true && !this.json && streams.env.CI === undefined;
    this.debug = options.debug;
    this.c = pc.createColors(this.color);
  }

  /** The one JSON document of a `--json` run. */
  document(value: unknown): void {
    if (this.#documentWritten) throw new Error('a second JSON document was about to be written');
    this.#documentWritten = true;
    this.#out(`${JSON.stringify(value, null, 2)}\n`);
  }

  /**
   * Writes to stdout; a write that fails (a file on a full disk) ends the command here with
   * `output_failed`, so the command can say what it had already done. A stream that reports the
   * failure as an event (stdout to a file does) has it marked as reported, for cli.ts.
   */
  #out(text: string): void {
    const stdout = this.streams.stdout as NodeJS.WritableStream & { errored?: unknown };
    let failure: unknown;
    try {
      stdout.write(text);
      failure = stdout.errored ?? undefined;
    } catch (err) {
      failure = err;
    }
    if (failure === undefined || failure === null) return;
    this.#stdoutFailed = true;
    if (typeof failure === 'object') Object.defineProperty(failure, OUTPUT_REPORTED, { value: true });
    throw outputFailed(failure);
  }

  /** A line of human output (ignored under --json, whose document says it all). */
  line(text = ''): void {
    if (!this.json) this.#out(`${text}\n`);
  }

  /** A note on stderr: progress, which path was taken; never data. */
  note(text: string): void {
    if (!this.json) this.streams.stderr.write(`${text}\n`);
  }

  debugLine(text: string): void {
    if (this.debug) this.streams.stderr.write(`debug: ${text}\n`);
  }

  /** Label/value pairs, aligned; on stderr when stdout carries data of its own (an offline line). */
  fields(rows: Array<[string, string]>, to: 'stdout' | 'stderr' = 'stdout'): void {
    const width = Math.max(...rows.map(([k]) => k.length));
    for (const [k, v] of rows) {
      const text = `${this.c.dim(k.padEnd(width))}  ${v}`;
      if (to === 'stdout') this.line(text);
      else this.note(text);
    }
  }

  table(head: string[], rows: string[][]): void {
    const table = new Table({
      head: head.map((h) => this.c.bold(h)),
      style: { head: [], border: [], compact: true },
      chars: { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' },
    });
    table.push(...rows);
    this.line(table.toString().replace(/^ /gm, '').replace(/ +$/gm, ''));
  }

  /** The failure, once: a JSON document under --json, else one line on stderr. */
  failure(f: Classified, stack?: string): void {
    if (f.code === 'output_failed' && f.details?.system_code === 'EPIPE') return; // the reader had enough
    if (this.json && !this.#stdoutFailed) {
      if (!this.#documentWritten) this.document({ error: { code: f.code, message: f.message, ...(f.details ? { details: f.details } : {}) } });
    } else {
      this.streams.stderr.write(`${this.c.red(`${programName()}:`)} ${f.message}\n`);
    }
    if (this.debug && stack) this.streams.stderr.write(`${stack}\n`);
  }

  /**
   * Waits `ms` (a wait the service asked for, or a retry's back-off): a countdown on a terminal,
   * one note otherwise for a wait a person would notice; Ctrl-C (`signal`) ends it with exit 130.
   */
  async wait(ms: number, why: string, signal: AbortSignal): Promise<void> {
    const noticeable = ms >= 1500;
    const seconds = (left: number): string => `${Math.ceil(left / 1000)} s`;
    if (noticeable && !this.interactive) this.note(`${why}; trying again in ${seconds(ms)}`);
    const end = Date.now() + ms;
    const draw = (): void => void this.streams.stderr.write(`\r\u001b[2K${why}; trying again in ${seconds(end - Date.now())} (Ctrl-C to stop)`);
    const ticker = noticeable && this.interactive ? setInterval(draw, 1000) : undefined;
    if (ticker) draw();
    try {
      await delay(ms, undefined, { signal });
    } catch {
      throw new CliError(EXIT.interrupted, 'interrupted', `interrupted while waiting: ${why}; nothing more was asked of the service`);
    } finally {
      if (ticker) {
        clearInterval(ticker);
        this.streams.stderr.write('\r\u001b[2K');
      }
    }
  }

  /** Runs `task` with a spinner on stderr when it is a TTY. */
  async spin<T>(text: string, task: () => Promise<T>): Promise<T> {
    if (!this.interactive) return task();
    const spinner = yoctoSpinner({ text, stream: this.streams.stderr as NodeJS.WriteStream }).start();
    try {
      return await task();
    } finally {
      spinner.stop();
    }
  }

  ok(text: string): string {
    return this.c.green(text);
  }
  bad(text: string): string {
    return this.c.red(text);
  }
  warn(text: string): string {
    return this.c.yellow(text);
  }
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** A date in the user's locale with a relative form: "Dec 22, 2026, 10:00 AM (in 29 days)". */
export function when(date: Date | string | null | undefined, now = Date.now()): string {
  if (date === null || date === undefined) return '-';
  const d = typeof date === 'string' ? new Date(date) : date;
  if (Number.isNaN(d.getTime())) return '-';
  const diff = d.getTime() - now;
  const [unit, ms] = UNITS.find(([, size]) => Math.abs(diff) >= size) ?? ['second', 1000];
  return `${absolute.format(d)} (${relative.format(Math.round(diff / ms), unit)})`;
}

/** A byte count for people: "512 B", "200.7 KiB", "1.2 GiB". */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}
