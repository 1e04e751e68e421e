#!/usr/bin/env node
// A receiver of the service's build notifications (interface section 6), on @plugin-license/api:
// it verifies each delivery from the raw body (X-Service-Signature over "timestamp.body",
// X-Service-Timestamp within 300 s), rejects stale, future, tampered and unsigned ones with 400,
// drops redeliveries, and appends what it accepted to a JSON-lines file before it answers 2xx.
// Its rules: a delivery is acknowledged only once its whole record is durable; the record file
// never holds a torn line where the next record is appended; the record file is the memory of
// what was handled (no bound, no expiry); a request that fails (aborted, reset) is that request's
// failure only, never the receiver's.
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { WebhookDeduplicator, isWebhookVerificationError, verifyWebhook } from '@plugin-license/api';

/**
 * An append-only JSON-lines file whose every line is whole. At open, a torn last line (a write
 * cut short by a crash or a full disk, never acknowledged) is cut off; an append that fails part
 * way is cut back off before the error is reported, or at the latest before the next append.
 */
export class RecordFile {
  #fd;
  /** Bytes of whole lines: where the next record goes. */
  #size;
  #torn = false;

  constructor(file) {
    this.#fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o600);
    this.#size = wholeLinesLength(this.#fd);
    if (this.#size !== fstatSync(this.#fd).size) this.#repair();
  }

  /** Appends one record and makes it durable; throws (leaving the file as it was) when it cannot. */
  append(record) {
    if (this.#torn) this.#repair();
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`);
    try {
      // writeSync may write less than asked (a disk with a few bytes left): write the rest, or fail.
      for (let done = 0; done < bytes.length; ) done += writeSync(this.#fd, bytes, done, bytes.length - done, this.#size + done);
      fsyncSync(this.#fd);
    } catch (error) {
      this.#torn = true;
      try {
        this.#repair();
      } catch {
        // Still torn: repaired before the next append.
      }
      throw error;
    }
    this.#size += bytes.length;
  }

  close() {
    closeSync(this.#fd);
  }

  #repair() {
    ftruncateSync(this.#fd, this.#size);
    fsyncSync(this.#fd);
    this.#torn = false;
  }
}

/** The length of `fd`'s content up to and including its last newline. */
function wholeLinesLength(fd) {
  const size = fstatSync(fd).size;
  const chunk = Buffer.alloc(64 * 1024);
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/** Largest delivery accepted; a build notification is a few kilobytes. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The records already in `file` (a missing file holds none; a torn last line is skipped). */
export function readRecords(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}

/**
 * Starts the receiver.
 *
 * @param {object} options
 * @param {string | string[]} options.secret the project's webhook secret (several during a rotation)
 * @param {string} options.record JSON-lines file of accepted deliveries; read at start, so a restart still drops redeliveries
 * @param {number} [options.port] default 0 (a free port)
 * @param {string} [options.host] default 127.0.0.1
 * @param {string} [options.path] default /hooks/build
 * @param {number} [options.toleranceSeconds] default 300
 * @param {() => number} [options.now] clock in ms, default Date.now
 * @param {(line: string) => void} [options.log] one line per delivery, default stderr
 */
export async function startReceiver(options) {
  const { secret, record, host = '127.0.0.1', port = 0, path = '/hooks/build', toleranceSeconds = 300, now = Date.now } = options;
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  // What was handled is what the record file holds, however old and however many: a bounded or
  // expiring memory would record an old delivery replayed later a second time.
  const recorded = new Set(readRecords(record).map((r) => r.key));
  const file = new RecordFile(record);

  const answer = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const handle = async (req, res) => {
    if (new URL(req.url ?? '/', 'http://receiver').pathname !== path) return answer(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') return answer(res, 405, { error: 'method_not_allowed' });
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return answer(res, 413, { error: 'too_large' });
      chunks.push(chunk);
    }
    const body = Buffer.concat(chunks);
    let verified;
    try {
      verified = verifyWebhook({ body, headers: req.headers, secret, toleranceSeconds, now });
    } catch (error) {
      if (!isWebhookVerificationError(error)) {
        log(`failed to verify: ${error.message}`);
        return answer(res, 500, { error: 'internal' });
      }
      log(`rejected: ${error.code}: ${error.message}`);
      return answer(res, 400, { error: error.code });
    }
    const { payload, form } = verified;
    const key = WebhookDeduplicator.keyOf(payload);
    if (recorded.has(key)) {
      log(`duplicate: ${key}`);
      return answer(res, 200, { duplicate: true });
    }
    try {
      // Durable before the 2xx: an accepted delivery is never lost, and a failed write lets the sender retry.
      file.append({ key, form, received_at: new Date(now()).toISOString(), delivery: req.headers['x-service-delivery'] ?? null, payload });
    } catch (error) {
      log(`not recorded (${error.message}); answering 500 so the service retries`);
      return answer(res, 500, { error: 'not_recorded' });
    }
    recorded.add(key);
    log(`accepted: ${key}`);
    return answer(res, 200, { accepted: key });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      // A client that hangs up mid-body (or any failure of one request) ends that request only.
      log(`request failed: ${error.code ?? error.message}`);
      if (!res.headersSent && !res.destroyed) answer(res, 500, { error: 'internal' });
      else res.destroy();
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}${path}`,
    port: address.port,
    /** Everything accepted so far (the record file, read again). */
    accepted: () => readRecords(record),
    close: () =>
      new Promise((resolve) => {
        // Stop accepting first, then end every connection: the other order lets a keep-alive
        // connection that arrives in between hold close() open.
        server.close(() => {
          file.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

function flag(args, name, fallback) {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

async function main(args) {
  if (args.includes('--help')) {
    process.stdout.write(
      'webhook-receiver [--host 127.0.0.1] [--port 8787] [--path /hooks/build] [--record deliveries.jsonl]\n' +
        'The secret comes from WEBHOOK_SECRET (several separated by commas during a rotation).\n' +
        'Prints {"url": ...} once it listens; one line per delivery on stderr.\n',
    );
    return;
  }
  const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (secrets.length === 0) {
    process.stderr.write('webhook-receiver: set WEBHOOK_SECRET to the project\'s webhook secret\n');
    process.exit(2);
  }
  const port = Number(flag(args, '--port', '8787'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be a whole number from 0 to 65535');
  const receiver = await startReceiver({
    secret: secrets,
    host: flag(args, '--host', '127.0.0.1'),
    port,
    path: flag(args, '--path', '/hooks/build'),
    record: flag(args, '--record', 'deliveries.jsonl'),
  });
  process.stdout.write(`${JSON.stringify({ url: receiver.url })}\n`);
  const stop = () => receiver.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`webhook-receiver: ${error.message}\n`);
    process.exit(1);
  });
}
