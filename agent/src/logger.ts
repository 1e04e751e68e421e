import { mkdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { createStream } from 'rotating-file-stream';
import type { LogLevel } from './config.js';

/** First 4 + "…" + last 4 characters: how a code (or any secret) may appear anywhere. */
export function hintOf(secret: string): string {
  return secret.length <= 8 ? '…' : `${secret.slice(0, 4)}…${secret.slice(-4)}`;
}

/** Field names never written as they are, whatever logs them. */
export const REDACTED_PATHS = [
  'token',
  '*.token',
  'activationCode',
  '*.activationCode',
  'params.code',
  'machineId',
  '*.machineId',
  'rawMachineId',
  '*.rawMachineId',
  'headers.authorization',
  '*.headers.authorization',
];

/** Replaces every registered secret in a log line by its hint: a last guard against leaks in messages. */
export class SecretScrubber {
  readonly #secrets = new Map<string, string>();

  add(secret: string | undefined): void {
    if (secret && secret.length >= 8 && !this.#secrets.has(secret)) {
      this.#secrets.set(secret, hintOf(secret));
      // Bounded: codes are remembered only as long as they matter for recent lines.
      if (this.#secrets.size > 1000) this.#secrets.delete(this.#secrets.keys().next().value as string);
    }
  }

  scrub(line: string): string {
    let out = line;
    for (const [secret, hint] of this.#secrets) {
      if (out.includes(secret)) out = out.split(secret).join(hint);
    }
    return out;
  }
}

export interface FileLogger {
  logger: Logger;
  scrubber: SecretScrubber;
  /** The active log file's folder. */
  dir: string;
  setLevel(level: LogLevel): void;
  close(): Promise<void>;
}

export interface FileLoggerOptions {
  dir: string;
  level: LogLevel;
  /** Rotate when the file reaches this size (e.g. '10M', '1K'). */
  size?: string;
  /** Rotated files kept besides the active one. */
  keep?: number;
}

/**
 * JSON lines to `DIR/agent.log` (pino; size-based rotation to `agent.1.log` … `agent.4.log`, 10 MB
 * each by default), with field redaction and a scrubber for secrets registered at run time.
 */
export async function createFileLogger(options: FileLoggerOptions): Promise<FileLogger> {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  // Size-based, classic rotation (agent.log, agent.1.log … agent.N.log): a small dependency-free
  // library, where pino-roll pulled date-fns (+11 MB resident) for time rotation we do not use.
  // In classic rotation the name generator gets the rotated file's number (none for the active one).
  const stream = createStream((n: number | Date | null) => (typeof n === 'number' && n > 0 ? `agent.${n}.log` : 'agent.log'), {
    path: options.dir,
    size: (options.size ?? '10M').toUpperCase() as `${number}M`,
    rotate: options.keep ?? 4,
    mode: 0o600,
  });
  stream.on('error', () => undefined); // a full disk must not take the agent down; lines are dropped
  const scrubber = new SecretScrubber();
  const destination = { write: (line: string) => stream.write(scrubber.scrub(line)) };
  const logger = pino(
    {
      level: options.level,
      base: { pid: process.pid },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
  let closed = false;
  return {
    logger,
    scrubber,
    dir: options.dir,
    setLevel(level) {
      logger.level = level;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        stream.once('close', () => resolve());
        stream.on('error', () => resolve());
        stream.end();
      }),
  };
}

/** A logger that writes nothing (embedding with `logger: false`). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
