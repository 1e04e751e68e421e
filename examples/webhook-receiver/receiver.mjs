#!/usr/bin/env node
// A receiver of the service's build notifications (interface section 6), on @plugin-license/api:
// it verifies each delivery from the raw body (X-Service-Signature over "timestamp.body",
// X-Service-Timestamp within 300 s), rejects stale, future, tampered and unsigned ones with 400,
// drops redeliveries, and appends what it accepted to a JSON-lines file before it answers 2xx.
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { WebhookDeduplicator, isWebhookVerificationError, verifyWebhook } from '@plugin-license/api';

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
  const dedupe = new WebhookDeduplicator({ now, ttlMs: 7 * 24 * 60 * 60 * 1000 });
  for (const r of readRecords(record)) dedupe.isDuplicate(r.payload);
  const fd = openSync(record, 'a', 0o600);

  const answer = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const server = createServer(async (req, res) => {
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
    if (dedupe.isDuplicate(payload)) {
      log(`duplicate: ${key}`);
      return answer(res, 200, { duplicate: true });
    }
    try {
      // Durable before the 2xx: an accepted delivery is never lost, and a failed write lets the sender retry.
      writeSync(fd, `${JSON.stringify({ key, form, received_at: new Date(now()).toISOString(), delivery: req.headers['x-service-delivery'] ?? null, payload })}\n`);
      fsyncSync(fd);
    } catch (error) {
      dedupe.forget(payload);
      log(`not recorded (${error.message}); answering 500 so the service retries`);
      return answer(res, 500, { error: 'not_recorded' });
    }
    log(`accepted: ${key}`);
    return answer(res, 200, { accepted: key });
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
          closeSync(fd);
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
