declare module 'pino-roll' {
  interface RollStream {
    write(chunk: string): boolean;
    end(): void;
    flush(callback?: (err?: Error) => void): void;
    flushSync(): void;
    once(event: 'close' | 'finish' | 'ready', listener: () => void): unknown;
    on(event: 'error', listener: (err: Error) => void): unknown;
  }
  interface PinoRollOptions {
    file: string | (() => string);
    size?: number | string;
    frequency?: number | string;
    extension?: string;
    symlink?: boolean;
    mkdir?: boolean;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
    dateFormat?: string;
    sync?: boolean;
  }
  const build: (options: PinoRollOptions) => Promise<RollStream>;
  export default build;
}
