#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { startEmulator, type Emulator } from './emulator.js';
import { isEmulatorError } from './errors.js';

function wholeNumber(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

interface CliOptions {
  host: string;
  port: number;
  data?: string;
  tls?: boolean;
  rateLimitActivation?: number;
  rateLimitBuilds?: number;
  rateLimitGeneral?: number;
  rateLimitTrigger?: number;
  downloadRedirect?: boolean;
  deliveryTimeoutMs?: number;
  quiet?: boolean;
  projectId?: string;
}

const perMinute = wholeNumber(1, 1_000_000_000);

const program = new Command()
  .name('plugin-license-emulator')
  .description('Local emulator of the plugin build and license service. Prints one JSON line {base_url, token, project_id, webhook_secret} on stdout once it listens, then logs to stderr.')
  .option('--host <host>', 'loopback address to listen on (127.0.0.1, ::1 or localhost)', '127.0.0.1')
  .option('--port <port>', 'port to listen on; 0 picks a free one', wholeNumber(0, 65535), 0)
  .option('--project-id <uuid>', "the demo project's id, e.g. the one compiled into a plugin (default: a random UUID)")
  .option('--data <file>', 'keep codes, activations, builds, token and project in this JSON file across restarts')
  .option('--rate-limit-activation <n>', 'activation requests per minute per client (default 60)', perMinute)
  .option('--rate-limit-builds <n>', 'builds requests per minute per client (default 10)', perMinute)
  .option('--rate-limit-general <n>', 'other requests per minute per client (default 100)', perMinute)
  .option('--rate-limit-trigger <n>', 'manual triggers per minute per project (default 10)', perMinute)
  .option('--download-redirect', 'answer build downloads with a 302 instead of {url, expires_at}')
  .option('--delivery-timeout-ms <ms>', 'real time an outgoing notification may take before it counts as failed (default 10000)', wholeNumber(1, 600_000))
  .option('--tls', 'serve HTTPS with a certificate generated at start; its PEM path is ca_file in the start-up line')
  .option('--quiet', 'no request logs on stderr')
  .action(async (opts: CliOptions) => {
    let emulator: Emulator;
    try {
      emulator = await startEmulator({
        host: opts.host,
        port: opts.port,
        dataFile: opts.data,
        logger: !opts.quiet,
        downloadRedirect: opts.downloadRedirect ?? false,
        tls: opts.tls ?? false,
        ...(opts.projectId === undefined ? {} : { projectId: opts.projectId }),
        ...(opts.deliveryTimeoutMs === undefined ? {} : { deliveryTimeoutMs: opts.deliveryTimeoutMs }),
        rateLimits: {
          ...(opts.rateLimitActivation === undefined ? {} : { activation: opts.rateLimitActivation }),
          ...(opts.rateLimitBuilds === undefined ? {} : { builds: opts.rateLimitBuilds }),
          ...(opts.rateLimitGeneral === undefined ? {} : { general: opts.rateLimitGeneral }),
          ...(opts.rateLimitTrigger === undefined ? {} : { trigger: opts.rateLimitTrigger }),
        },
      });
    } catch (error) {
      process.stderr.write(`plugin-license-emulator: ${isEmulatorError(error) ? error.message : String(error)}\n`);
      process.exitCode = isEmulatorError(error) && (error.code === 'host_not_loopback' || error.code === 'invalid_option') ? 2 : 1;
      return;
    }
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`plugin-license-emulator: ${signal}, closing\n`);
      emulator.close().then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`plugin-license-emulator: close failed: ${String(error)}\n`);
          process.exit(1);
        },
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);

    // Printed only once the handlers are in place: a parent may signal as soon as it reads the line.
    const line = {
      base_url: emulator.baseUrl,
      token: emulator.token,
      project_id: emulator.projectId,
      webhook_secret: emulator.webhookSecret,
      ...(emulator.caFile ? { ca_file: emulator.caFile } : {}),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`plugin-license-emulator: ${String(error)}\n`);
  process.exitCode = 1;
});
