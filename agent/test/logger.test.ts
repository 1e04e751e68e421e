import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileLogger, hintOf } from '../src/logger.js';
import { shortDir } from './helpers.js';

const dirs: Array<() => void> = [];
afterEach(() => dirs.splice(0).forEach((c) => c()));

describe('file log', () => {
  it('writes JSON lines, rotates by size, keeps a bounded number of files and redacts secrets', async () => {
    const d = shortDir();
    dirs.push(d.cleanup);
    const dir = join(d.dir, 'log');
    const code = '3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601';
    const log = await createFileLogger({ dir, level: 'info', size: '1k', keep: 2 });
    log.scrubber.add(code);
    const rotated = (): number => readdirSync(dir).filter((f) => /^agent\.\d+\.log$/.test(f)).length;
    const size = (): number => (readdirSync(dir).includes('agent.log') ? readFileSync(join(dir, 'agent.log')).length : 0);
    for (let round = 0; round < 6; round++) {
      // About 5 KB a round: past the 1 KB size, so the file is rolled once the writes land.
      for (let i = 0; i < 20; i++) {
        log.logger.info({ i, token: 'bearer-secret-token', machineId: 'raw-machine-id', params: { code } }, `line ${round}.${i} about ${code}`);
      }
      await expect.poll(() => rotated() >= Math.min(round + 1, 2) && size() < 2048, { message: `rotation ${round + 1}` }).toBe(true);
    }
    log.logger.debug('not at info level');
    await log.close();
    const files = readdirSync(dir).filter((f) => /^agent(\.\d+)?\.log$/.test(f));
    // Rotated six times, but only the active file and `keep` older ones remain.
    expect(files.sort()).toEqual(['agent.1.log', 'agent.2.log', 'agent.log']);
    const text = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('');
    const lines = text.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(entry).toMatchObject({ level: 30, token: '[redacted]', machineId: '[redacted]', params: { code: '[redacted]' } });
      expect(entry.msg).toContain(`about ${hintOf(code)}`);
    }
    expect(text).not.toContain(code);
    expect(text).not.toContain('bearer-secret-token');
    expect(text).not.toContain('raw-machine-id');
    expect(text).not.toContain('not at info level');
  });
});
