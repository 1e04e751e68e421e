import { createHash } from 'node:crypto';
import { ArtifactList, Build, BuildList, BuildUsage, CreatedBuild, DownloadLink } from '@plugin-license/api';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { call } from './http.js';
import { HIGH_LIMITS, useEmulator } from './helpers.js';

// A fixed base clock: builds move only when a test moves the emulator's clock.
const T0 = Date.UTC(2030, 3, 10, 8, 0, 0);
const STEP = 1000;
const STEPS = ['checkout', 'configure', 'compile', 'sign', 'package', 'upload'];
const { emu, ctl } = useEmulator({ now: () => T0, rateLimits: HIGH_LIMITS }, { buildStepMs: STEP });

const at = (ms: number): string => new Date(T0 + ms).toISOString();
const advance = (ms: number) => ctl.clock({ advance_ms: ms });

async function create(body: Record<string, unknown> = {}): Promise<CreatedBuild> {
  const answer = await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, ...body } });
  expect(answer.status, answer.text).toBe(201);
  return CreatedBuild.parse(answer.json);
}

async function get(id: string): Promise<Build> {
  return Build.parse((await call(emu, 'GET', `/builds/${id}`)).json);
}

describe('build lifecycle on the emulator clock', () => {
  it('goes pending, queued, running through named steps, then success with artifacts and timestamps', async () => {
    const build = await create({ platforms: ['macos', 'windows'], formats: ['vst3', 'au', 'standalone'] });
    expect(await get(build.id)).toMatchObject({ status: 'pending', started_at: null, metadata: { current_step: 'pending', step_progress: 0 } });

    await advance(STEP - 1);
    expect((await get(build.id)).status).toBe('pending');
    await advance(1);
    expect(await get(build.id)).toMatchObject({ status: 'queued', started_at: null, metadata: { current_step: 'queued' } });

    await advance(STEP);
    const running = await get(build.id);
    expect(running).toMatchObject({ status: 'running', started_at: at(2 * STEP), metadata: { current_step: 'checkout', step_progress: 0 } });
    expect(running.github_run_url).toMatch(/^https:\/\/github\.com\/emulator-dev\/demo-reverb\/actions\/runs\/2$/);

    const seen: Array<[string, number]> = [];
    for (let i = 1; i < STEPS.length; i++) {
      await advance(STEP);
      const b = await get(build.id);
      seen.push([b.metadata.current_step, b.metadata.step_progress]);
      expect(b.status).toBe('running');
    }
    expect(seen).toEqual([
      ['configure', 17],
      ['compile', 33],
      ['sign', 50],
      ['package', 67],
      ['upload', 83],
    ]);

    await advance(STEP);
    const done = await get(build.id);
    expect(done).toMatchObject({ status: 'success', metadata: { current_step: 'completed', step_progress: 100 } });
    const item = BuildList.parse((await call(emu, 'GET', `/builds?status=success&project_id=${emu.projectId}`)).json).builds.find((b) => b.id === build.id);
    expect(item?.completed_at).toBe(at((2 + STEPS.length) * STEP));

    const { artifacts } = ArtifactList.parse((await call(emu, 'GET', `/builds/${build.id}/artifacts`)).json);
    expect(artifacts.map((a) => `${a.platform}/${a.format}`).sort()).toEqual(['macos/au', 'macos/standalone', 'macos/vst3', 'windows/standalone', 'windows/vst3']);
    expect(artifacts.map((a) => a.file_name)).toContain('DemoReverb-1.0.0-windows.exe.zip');
    for (const a of artifacts) {
      expect(a.is_signed).toBe(a.platform === 'macos');
      expect(a.created_at).toBe(at(8 * STEP));
      expect(a.file_size).toBeGreaterThan(65_536);
    }
  });

  it('one large clock jump applies every transition at its own instant', async () => {
    const build = await create();
    await advance(60 * STEP);
    const b = await get(build.id);
    expect(b).toMatchObject({ status: 'success', started_at: at(2 * STEP) });
  });

  it('fails at a step with fail_rate 1, keeping that step as current_step', async () => {
    await ctl.buildSettings({ fail_rate: 1, seed: 7 });
    const build = await create();
    await advance(20 * STEP);
    const b = await get(build.id);
    expect(b.status).toBe('failed');
    expect(STEPS).toContain(b.metadata.current_step);
    expect((await call(emu, 'GET', `/builds/${build.id}/artifacts`)).body).toEqual({ artifacts: [] });
  });

  it('draws the same outcomes from the same seed, and different ones from another', async () => {
    const run = async (seed: number): Promise<string[]> => {
      await ctl.reset();
      await ctl.buildSettings({ step_ms: STEP, fail_rate: 0.5, seed });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await create()).id);
      await advance(20 * STEP);
      return Promise.all(ids.map(async (id) => {
        const b = await get(id);
        return b.status === 'failed' ? `failed@${b.metadata.current_step}` : b.status;
      }));
    };
    const first = await run(42);
    expect(await run(42)).toEqual(first);
    expect(first).toContain('success');
    expect(first.some((o) => o.startsWith('failed@'))).toBe(true);
    expect(await run(43)).not.toEqual(first);
  });

  it('cancels pending, queued and running builds; a finished one is refused with 400', async () => {
    const pending = await create();
    const cancelled = await call(emu, 'POST', `/builds/${pending.id}/cancel`);
    expect(cancelled.body).toEqual({ id: pending.id, status: 'cancelled' });

    const running = await create();
    await advance(3 * STEP);
    expect((await get(running.id)).status).toBe('running');
    expect((await call(emu, 'POST', `/builds/${running.id}/cancel`)).body).toEqual({ id: running.id, status: 'cancelled' });
    await advance(20 * STEP);
    expect(await get(running.id)).toMatchObject({ status: 'cancelled', metadata: { current_step: 'cancelled' } });
    expect((await get(pending.id)).status).toBe('cancelled');

    const finished = await create();
    await advance(20 * STEP);
    const refused = await call(emu, 'POST', `/builds/${finished.id}/cancel`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'bad_request', details: { field: 'status', status: 'success' } });
  });

  it('serves artifact bytes matching size and checksum until the link expires, counting downloads', async () => {
    const build = await create({ platforms: ['windows'], formats: ['vst3'] });
    await advance(20 * STEP);
    const [artifact] = ArtifactList.parse((await call(emu, 'GET', `/builds/${build.id}/artifacts`)).json).artifacts;
    const link = DownloadLink.parse((await call(emu, 'GET', `/builds/${build.id}/download/${artifact!.id}`)).json);
    expect(Date.parse(link.expires_at ?? "")).toBe(T0 + 20 * STEP + 15 * 60_000);
    const file = await request(link.url);
    const bytes = Buffer.from(await file.body.arrayBuffer());
    expect(file.statusCode).toBe(200);
    expect(bytes.length).toBe(artifact!.file_size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(artifact!.checksum_sha256);

    await advance(15 * 60_000 + 1);
    const expired = await request(link.url);
    expect(expired.statusCode).toBe(403);
    expect(await expired.body.json()).toMatchObject({ error: 'forbidden', details: { field: 'expires' } });
    const after = ArtifactList.parse((await call(emu, 'GET', `/builds/${build.id}/artifacts`)).json).artifacts[0];
    expect(after?.download_count).toBe(1);
  });

  it('refuses builds past the quota of the period with 403 and resets at the next period', async () => {
    const usage = BuildUsage.parse((await call(emu, 'GET', '/builds/usage')).json);
    expect(usage).toMatchObject({ period: '2030-04', used: 1, limit: 100, remaining: 99, extra_builds: 0, reset_at: '2030-05-01T00:00:00.000Z' });
    for (let i = 0; i < usage.remaining; i++) await create();
    const refused = await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', details: { period: '2030-04', used: 100, limit: 100 } });
    const trigger = await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    expect(trigger.status).toBe(403);

    await ctl.clock({ now: '2030-05-01T00:00:00.000Z' });
    expect(BuildUsage.parse((await call(emu, 'GET', '/builds/usage')).json)).toMatchObject({ period: '2030-05', used: 0, remaining: 100, reset_at: '2030-06-01T00:00:00.000Z' });
    await create();
  });

  it('the manual trigger honours platforms, formats, release_type, ref and commit_sha, and starts queued', async () => {
    const answer = await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, {
      body: { ref: 'refs/tags/v2.3.4', commit_sha: 'abcdef1234567', platforms: ['windows'], formats: ['standalone'], release_type: 'patch' },
      token: null,
      headers: { 'x-webhook-secret': emu.webhookSecret },
    });
    expect(answer.status).toBe(201);
    const id = answer.body.build_id as string;
    const b = await get(id);
    expect(b).toMatchObject({ status: 'queued', version_number: '2.3.4', platforms: ['windows'], formats: ['standalone'] });
    const state = (await ctl.state()) as { builds: Array<{ id: string; ref: string; commit_sha: string; release_type: string }> };
    expect(state.builds.find((x) => x.id === id)).toMatchObject({ ref: 'refs/tags/v2.3.4', commit_sha: 'abcdef1234567', release_type: 'patch' });
    await advance(STEP);
    expect((await get(id)).status).toBe('running');
  });
});

describe('push and release triggers', () => {
  const push = (branch: string, files: string[]) => ctl.push(emu.projectId, { branch, files });

  const cases: Array<{ name: string; trigger: Record<string, unknown>; branch: string; files: string[]; builds: boolean; reason?: RegExp }> = [
    { name: 'exact branch', trigger: { branches: ['main'] }, branch: 'main', files: ['src/a.cpp'], builds: true },
    { name: 'refs/heads/ prefix', trigger: { branches: ['main'] }, branch: 'refs/heads/main', files: ['src/a.cpp'], builds: true },
    { name: 'other branch', trigger: { branches: ['main'] }, branch: 'dev', files: ['src/a.cpp'], builds: false, reason: /branch "dev" matches none/ },
    { name: 'glob within a segment', trigger: { branches: ['release/*'] }, branch: 'release/1.2', files: ['a'], builds: true },
    { name: '* stops at /', trigger: { branches: ['release/*'] }, branch: 'release/1.2/hotfix', files: ['a'], builds: false },
    { name: '** crosses /', trigger: { branches: ['release/**'] }, branch: 'release/1.2/hotfix', files: ['a'], builds: true },
    { name: 'no branches: any branch', trigger: {}, branch: 'feature/x', files: ['a'], builds: true },
    { name: 'include matches one file', trigger: { paths: { include: ['src/**'] } }, branch: 'main', files: ['README.md', 'src/dsp/reverb.cpp'], builds: true },
    { name: 'include matches none', trigger: { paths: { include: ['src/**'] } }, branch: 'main', files: ['README.md'], builds: false, reason: /no changed file matches paths.include/ },
    { name: 'exclude removes every file', trigger: { paths: { exclude: ['docs/**', '*.md'] } }, branch: 'main', files: ['docs/a.md', 'README.md'], builds: false, reason: /every changed file matches paths.exclude/ },
    { name: 'exclude leaves one file', trigger: { paths: { exclude: ['docs/**'] } }, branch: 'main', files: ['docs/a.md', 'src/a.cpp'], builds: true },
    { name: 'an excluded file never satisfies include', trigger: { paths: { include: ['src/**'], exclude: ['src/**/*.md'] } }, branch: 'main', files: ['src/notes.md', 'README.md'], builds: false, reason: /paths.include/ },
    { name: 'dot files match', trigger: { paths: { include: ['**/*.yml'] } }, branch: 'main', files: ['.github/workflows/build.yml'], builds: true },
    { name: 'disabled', trigger: { enabled: false }, branch: 'main', files: ['a'], builds: false, reason: /disabled/ },
  ];

  it.each(cases)('push: $name', async ({ trigger, branch, files, builds, reason }) => {
    await ctl.triggers(emu.projectId, [{ trigger: 'push', ...trigger, build_config: { platforms: ['macos'], formats: ['au'], release_type: 'dev', flags: { enableDebugMode: true } } }]);
    const answer = await push(branch, files);
    if (!builds) {
      expect(answer.build_id).toBeNull();
      if (reason) expect(answer.reason).toMatch(reason);
      return;
    }
    expect(answer).toMatchObject({ status: 'queued', trigger: 0 });
    const b = await get(answer.build_id!);
    expect(b).toMatchObject({ status: 'queued', platforms: ['macos'], formats: ['au'] });
    const state = (await ctl.state()) as { builds: Array<{ id: string; ref: string; flags: unknown; release_type: string; source: string; commit_sha: string }> };
    const stored = state.builds.find((x) => x.id === answer.build_id);
    expect(stored).toMatchObject({ ref: `refs/heads/${branch.replace('refs/heads/', '')}`, flags: { enableDebugMode: true }, release_type: 'dev', source: 'push' });
    expect(stored?.commit_sha).toMatch(/^[0-9a-f]{40}$/);
  });

  it('a push with no trigger says so; the first matching trigger of several wins', async () => {
    expect(await push('main', ['a'])).toEqual({ build_id: null, reason: 'the project has no push trigger' });
    await ctl.triggers(emu.projectId, [
      { trigger: 'release', release_types: ['published'] },
      { trigger: 'push', branches: ['dev'] },
      { trigger: 'push', branches: ['main'], build_config: { formats: ['vst3'] } },
      { trigger: 'push', branches: ['*'] },
    ]);
    const answer = await push('main', ['a']);
    expect(answer.trigger).toBe(2);
    expect((await get(answer.build_id!)).formats).toEqual(['vst3']);
  });

  const releases: Array<{ types: string[]; published: string; builds: boolean }> = [
    { types: ['published'], published: 'published', builds: true },
    { types: ['published', 'prereleased'], published: 'prereleased', builds: true },
    { types: ['published'], published: 'prereleased', builds: false },
  ];

  it.each(releases)('release: $published against $types', async ({ types, published, builds }) => {
    await ctl.triggers(emu.projectId, [{ trigger: 'release', release_types: types, build_config: { release_type: 'release' } }]);
    const answer = await ctl.release(emu.projectId, { release_type: published, tag: 'v3.1.0' });
    if (!builds) {
      expect(answer).toMatchObject({ build_id: null, reason: expect.stringContaining(`release type "${published}" is not among`) });
      return;
    }
    expect(await get(answer.build_id!)).toMatchObject({ status: 'queued', version_number: '3.1.0' });
  });
});

describe('bad input to the build controls: 400 with details, never a 500', () => {
  const bad: Array<[string, string, unknown, string]> = [
    ['PUT', '/build-settings', { step_ms: 0 }, 'step_ms'],
    ['PUT', '/build-settings', { fail_rate: 1.5 }, 'fail_rate'],
    ['PUT', '/build-settings', { seed: -1 }, 'seed'],
    ['PUT', '/build-settings', { steps: 3 }, 'body'],
    ['PUT', '/build-settings', [], 'body'],
    ['PUT', '/projects/PID/triggers', { trigger: 'push' }, 'body'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'tag' }], '0.trigger'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'push', branches: 'main' }], '0.branches'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'push', branches: [''] }], '0.branches.0'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'push', release_types: ['published'] }], '0.release_types'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'release' }], '0.release_types'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'push', build_config: { formats: ['standalone'] } }], '0.build_config.formats.0'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'push', build_config: { flags: { a: 'yes' } } }], '0.build_config.flags.a'],
    ['PUT', '/projects/PID/triggers', [{ trigger: 'push', branch: ['main'] }], '0'],
    ['PUT', '/projects/PID/notifications', { url: 'ftp://127.0.0.1/x', events: ['build.success'] }, 'url'],
    ['PUT', '/projects/PID/notifications', { url: 'http://example.invalid/hook', events: ['build.success'] }, 'url'],
    ['PUT', '/projects/PID/notifications', { url: 'not a url', events: [] }, 'url'],
    ['PUT', '/projects/PID/notifications', { url: 'http://127.0.0.1:9/x', events: ['build.done'] }, 'events.0'],
    ['PUT', '/projects/PID/notifications', { url: 'http://127.0.0.1:9/x', events: [], form: 'compact' }, 'form'],
    ['POST', '/projects/PID/push', { files: [] }, 'branch'],
    ['POST', '/projects/PID/push', { branch: 'main' }, 'files'],
    ['POST', '/projects/PID/push', { branch: 'main', files: [''] }, 'files.0'],
    ['POST', '/projects/PID/push', { branch: 'main', files: [], commit_sha: 'xyz' }, 'commit_sha'],
    ['POST', '/projects/PID/release', { tag: 'v1' }, 'release_type'],
    ['POST', '/projects/PID/release', { release_type: 'published' }, 'tag'],
  ];

  it.each(bad)('%s %s %j -> field %s', async (method, path, body, field) => {
    const answer = await call(emu, method, `/__emulator${path.replace('PID', emu.projectId)}`, { body });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body).toMatchObject({ error: 'bad_request', details: { field } });
  });

  it('malformed JSON, an unknown project and a non-UUID project id', async () => {
    const raw = await call(emu, 'PUT', '/__emulator/build-settings', { raw: '{"step_ms":', headers: { 'content-type': 'application/json' } });
    expect(raw.status).toBe(400);
    const unknown = await call(emu, 'POST', '/__emulator/projects/00000000-0000-4000-8000-000000000000/push', { body: { branch: 'main', files: [] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'not_found', details: { field: 'id' } });
    const notUuid = await call(emu, 'PUT', '/__emulator/projects/demo/triggers', { body: [] });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body).toMatchObject({ details: { field: 'id' } });
    const wrongMethod = await call(emu, 'GET', '/__emulator/build-settings');
    expect(wrongMethod.status).toBe(405);
  });
});
