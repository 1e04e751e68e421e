import type { Socket } from 'node:net';
import { LineSplitter } from './framing.js';
import { MAX_LINE_BYTES, RpcErrorCode, checkEnvelope, type RequestId, type RpcErrorObject, type RpcRequest } from './protocol.js';
import type { Scheduler } from './scheduler.js';
import { TokenBucket } from './token-bucket.js';
import type { AgentLimits } from './config.js';
import { cachedJson } from './license-state.js';

/** What a connection needs from the agent. */
export interface ConnectionHost {
  limits(): AgentLimits;
  scheduler: Scheduler;
  /** Handles one request; returns the result, or a promise of it. Throws for an error answer. */
  dispatch(connection: Connection, request: RpcRequest): unknown;
  /** Maps an error thrown by dispatch to its JSON-RPC error. */
  toError(err: unknown): RpcErrorObject;
  track(promise: Promise<unknown>): void;
  closed(connection: Connection): void;
}

const MAX_IN_FLIGHT = 32;
/** Most distinct projects a connection's loads are noticed for (as many as it may subscribe to). */
const MAX_ASKED = 256;

/** One client connection: framing, per-connection limits, backpressure, subscriptions. */
export class Connection {
  readonly id: number;
  /** `null`: not subscribed; `'*'` every project; otherwise the project ids. */
  subscription: Set<string> | '*' | null = null;
  readonly #splitter = new LineSplitter(MAX_LINE_BYTES);
  readonly #onLine = (line: string): void => this.#handleLine(line);
  readonly #rate: TokenBucket;
  #inFlight = 0;
  #lastRequestAt: number;
  #paused = false;
  #closing = false;
  /** Answers made while one chunk is read, written together at its end (one write, not one each). */
  #batch: string | undefined;
  /** The client closed its sending side: answer what it asked, then close. */
  #peerEnded = false;
  /** Projects this connection has asked about with `check` or `subscribe`. */
  #asked: Set<string> | undefined;

  readonly #host: ConnectionHost;

  constructor(
    id: number,
    readonly socket: Socket,
    host: ConnectionHost,
  ) {
    this.#host = host;
    this.id = id;
    const limits = host.limits();
    this.#rate = new TokenBucket({ capacity: limits.requestBurst, refillPerSecond: limits.requestRate, now: () => host.scheduler.now() });
    this.#lastRequestAt = host.scheduler.now();
    // A DAW opening a session connects dozens of plugins at once, so the work per connection is
    // kept small: 'drain' is listened to only while paused, and answers of one chunk are one write.
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => {
      this.#peerEnded = true;
      if (this.#inFlight === 0) this.#closeAfterFlush();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.#closing = true;
      host.closed(this);
    });
  }

  /** Bytes of answers waiting to be written to this client. */
  get pendingWriteBytes(): number {
    return this.socket.writableLength;
  }

  /** Bytes of an unfinished request line held. */
  get pendingReadBytes(): number {
    return this.#splitter.buffered;
  }

  get isPaused(): boolean {
    return this.#paused;
  }

  /**
   * True the first time this connection asks about `projectId` (`check` or `subscribe`): a plugin
   * loading it. Bounded: past 256 distinct projects, nothing more counts as a load.
   */
  firstAsk(projectId: string): boolean {
    const asked = (this.#asked ??= new Set());
    if (asked.has(projectId) || asked.size >= MAX_ASKED) return false;
    asked.add(projectId);
    return true;
  }

  /** Picks up new limits (SIGHUP). */
  reconfigure(limits: AgentLimits): void {
    this.#rate.configure(limits.requestBurst, limits.requestRate);
  }

  /** Sends a notification; a subscriber far behind on reading is dropped rather than buffered. */
  notify(method: string, params: unknown): void {
    if (this.#closing) return;
    if (this.socket.writableLength > this.#host.limits().writeBufferBytes * 4) {
      this.socket.destroy();
      return;
    }
    this.#write({ jsonrpc: '2.0', method, params });
  }

  /** Answers -32003 and closes (used when the connection is over the connection limit). */
  refuse(limit: string, message: string): void {
    this.#sendError(null, { code: RpcErrorCode.overLimit, message, data: { limit } });
    this.#closeAfterFlush();
  }

  /** Ends the connection once pending answers are written (shutdown). */
  end(): void {
    this.#closeAfterFlush();
  }

  #onData(chunk: Buffer): void {
    if (this.#closing) return;
    this.#batch = '';
    let overflow: boolean;
    try {
      overflow = this.#splitter.push(chunk, this.#onLine);
    } finally {
      const batch = this.#batch;
      this.#batch = undefined;
      if (batch && !this.#closing) this.#writeNow(batch);
    }
    if (this.#closing) return;
    if (overflow) {
      this.#sendError(null, {
        code: RpcErrorCode.invalidRequest,
        message: `invalid request: line longer than ${MAX_LINE_BYTES} bytes (newline included); the connection is closed`,
        data: { limit: 'line_bytes', max: MAX_LINE_BYTES },
      });
      this.#closeAfterFlush();
      return;
    }
    this.#applyBackpressure();
  }

  #handleLine(line: string): void {
    if (this.#closing || isBlank(line)) return;
    this.#lastRequestAt = this.#host.scheduler.now();
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      if (!this.#rate.take()) return this.#overRate(null);
      this.#sendError(null, { code: RpcErrorCode.parseError, message: `parse error: the line is not valid JSON (${(err as Error).message}); send one JSON-RPC request per line` });
      return;
    }
    const envelope = checkEnvelope(value);
    if (!envelope.ok) {
      if (!this.#rate.take()) return this.#overRate(envelope.id);
      this.#sendError(envelope.id, envelope.error);
      return;
    }
    const { request } = envelope;
    const id = request.id;
    if (!this.#rate.take()) return this.#overRate(id === undefined ? null : id);
    let result: unknown;
    try {
      result = this.#host.dispatch(this, request);
    } catch (err) {
      if (id !== undefined) this.#sendError(id, this.#host.toError(err));
      return;
    }
    if (result instanceof Promise) {
      this.#inFlight += 1;
      const done = result.then(
        (value) => {
          if (id !== undefined) this.#sendResult(id, value);
        },
        (err) => {
          if (id !== undefined) this.#sendError(id, this.#host.toError(err));
        },
      ).finally(() => {
        this.#inFlight -= 1;
        if (this.#peerEnded && this.#inFlight === 0) this.#closeAfterFlush();
        else this.#applyBackpressure();
      });
      this.#host.track(done);
    } else if (id !== undefined) {
      this.#sendResult(id, result);
    }
  }

  /** True when this connection may start another slow (network) request. */
  canStartSlowRequest(): boolean {
    return this.#inFlight < MAX_IN_FLIGHT;
  }

  #overRate(id: RequestId): void {
    this.#sendError(id, {
      code: RpcErrorCode.overLimit,
      message: `over the request rate of this connection (${this.#host.limits().requestRate}/s); slow down and retry`,
      data: { limit: 'request_rate' },
    });
  }

  #sendResult(id: RequestId, result: unknown): void {
    const json = cachedJson(result);
    if (json === undefined) this.#write({ jsonrpc: '2.0', id, result });
    else this.#writeLine(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${json}}\n`);
  }

  #sendError(id: RequestId, error: RpcErrorObject): void {
    this.#write({ jsonrpc: '2.0', id, error });
  }

  #write(message: unknown): void {
    this.#writeLine(JSON.stringify(message) + '\n');
  }

  #writeLine(line: string): void {
    if (this.#batch !== undefined) this.#batch += line;
    else this.#writeNow(line);
  }

  #writeNow(line: string): void {
    if (this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(line);
    if (this.socket.writableLength > this.#host.limits().writeBufferBytes * 4) {
      // A client that sends but never reads: past the hard cap it is dropped, never buffered.
      this.socket.destroy();
    }
  }

  #applyBackpressure(): void {
    if (this.#closing) return;
    const over = this.socket.writableLength > this.#host.limits().writeBufferBytes;
    if (over && !this.#paused) {
      this.#paused = true;
      this.socket.pause();
      this.socket.once('drain', () => {
        this.#paused = false;
        if (!this.#closing) this.socket.resume();
      });
    }
  }

  /**
   * Drops the connection when no complete request came for `idleTimeoutMs` (since it opened, if
   * none yet); subscribers and connections with requests in flight are exempt. The socket
   * server's sweep calls it: one timer for all connections, not one each.
   */
  dropIfIdle(now: number, idleTimeoutMs: number): void {
    if (this.#closing || this.subscription !== null || this.#inFlight > 0) return;
    if (now - this.#lastRequestAt >= idleTimeoutMs) this.socket.destroy();
  }

  #closeAfterFlush(): void {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#batch) {
      // Answers of the chunk being read go out before the end; later ones are dropped.
      const batch = this.#batch;
      this.#batch = '';
      this.#writeNow(batch);
    }
    if (this.#peerEnded && this.socket.writableLength === 0) {
      // The client closed its side and has every answer: end ours, and the socket closes itself.
      this.socket.end();
      return;
    }
    // Nothing more is read from a closing connection (one whose client ended sends nothing more).
    if (!this.#peerEnded) this.socket.pause();
    // Once the answer is handed to the kernel the peer can still read it: then drop the socket
    // rather than wait for a peer that may never close its side (or never read).
    this.socket.end(() => this.socket.destroy());
    const timer = setTimeout(() => this.socket.destroy(), 2_000);
    timer.unref();
    this.socket.once('close', () => clearTimeout(timer));
  }
}

/** An empty line, or one of a CR (a CRLF client) or a space or two, is no request and is skipped. */
function isBlank(line: string): boolean {
  if (line.length > 2) return false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}
