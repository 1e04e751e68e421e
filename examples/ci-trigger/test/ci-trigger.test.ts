// The CI trigger examples against the emulator: the sh script (curl + openssl) signed and with the
// secret sent, and the Node script; a wrong secret fails with exit 1 and never prints the secret.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '@plugin-license/api';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = (file: string): string => fileURLToPath(new URL(`../${file}`, import.meta.url));
let emu: Emulator;
let admin: ServiceClient;

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: { trigger: 1000, builds: 1000 } });
  admin = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, retry: false });
});
afterAll(async () => {
  await admin?.close();
  await emu?.close();
});

function run(command: string, args: string[], secret: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH, BASE_URL: emu.baseUrl, PROJECT_ID: emu.projectId, WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('examples/ci-trigger', () => {
  it.each([
    ['trigger.sh (signed)', 'sh', [here('trigger.sh'), 'refs/tags/v2.0.0', SHA, 'release']],
    ['trigger.sh --send-secret', 'sh', [here('trigger.sh'), '--send-secret', 'refs/tags/v2.0.1', SHA]],
    ['trigger.mjs', process.execPath, [here('trigger.mjs'), 'refs/tags/v2.0.2', SHA, 'patch']],
  ])('%s starts a queued build with the ref and commit', async (_name, command, args) => {
    const result = await run(command, args as string[], emu.webhookSecret);
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as { build_id: string; status: string };
    expect(answer.status).toBe('queued');
    const build = await admin.builds.get(answer.build_id);
    const tag = (args as string[]).find((a) => a.startsWith('refs/tags/'))!;
    expect(build).toMatchObject({ status: 'queued', version_number: tag.replace('refs/tags/v', '') });
  });

  it.each([
    ['trigger.sh', 'sh', [here('trigger.sh'), 'refs/heads/main', SHA]],
    ['trigger.sh --send-secret', 'sh', [here('trigger.sh'), '--send-secret', 'refs/heads/main', SHA]],
    ['trigger.mjs', process.execPath, [here('trigger.mjs'), 'refs/heads/main', SHA]],
  ])('%s with a wrong secret exits 1 and does not print it', async (_name, command, args) => {
    const result = await run(command, args as string[], 'whsec_not_the_secret');
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toMatch(/401|unauthorized|X-Signature|X-Webhook-Secret/i);
    expect(result.stdout + result.stderr).not.toContain('whsec_not_the_secret');
  });

  it('the GitHub Actions step runs the script with the secret from the secret store', () => {
    const workflow = readFileSync(here('github-actions.yml'), 'utf8');
    expect(workflow).toContain('WEBHOOK_SECRET: ${{ secrets.PLUGIN_WEBHOOK_SECRET }}');
    expect(workflow).toContain('sh examples/ci-trigger/trigger.sh "$GITHUB_REF" "$GITHUB_SHA"');
  });
});
