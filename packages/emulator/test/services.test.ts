import { createHash, createHmac } from 'node:crypto';
import {
  ArtifactList,
  Build,
  BuildList,
  BuildUsage,
  CancelledBuild,
  CreatedBuild,
  CreatedProject,
  DiscoveredRepos,
  DownloadLink,
  ErrorBody,
  HostingConnection,
  LinkResult,
  SdkDescriptor,
  SdkDownload,
  SuccessMessage,
  TriggerResult,
  UnlinkResult,
} from '@plugin-license/api';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../src/index.js';
import { call } from './http.js';
import { HIGH_LIMITS, useEmulator } from './helpers.js';

const T0 = Date.UTC(2030, 3, 10, 8, 0, 0);
const { emu, ctl } = useEmulator({ now: () => T0, rateLimits: HIGH_LIMITS }, { reset: true });

async function seededBuild(): Promise<{ id: string; artifacts: Array<{ id: string; file_name: string; checksum_sha256: string; file_size: number }> }> {
  const list = BuildList.parse((await call(emu, 'GET', `/builds?project_id=${emu.projectId}&status=success`)).json);
  const id = list.builds[0]!.id;
  const artifacts = ArtifactList.parse((await call(emu, 'GET', `/builds/${id}/artifacts`)).json).artifacts;
  return { id, artifacts };
}

describe('builds', () => {
  it('creates pending builds, gets and lists them with filters and pagination', async () => {
    const created = await call(emu, 'POST', '/builds', {
      body: { project_id: emu.projectId, platforms: ['macos'], formats: ['au', 'vst3'], release_type: 'minor', flags: { enableActivationKeys: true }, clean_build: true },
    });
    expect(created.status).toBe(201);
    const build = CreatedBuild.parse(created.json);
    expect(build).toMatchObject({ status: 'pending', project_id: emu.projectId, build_number: 2, version_number: '1.1.0', platforms: ['macos'], formats: ['au', 'vst3'] });
    expect(build.queued_at).toBe(new Date(T0).toISOString());

    const got = Build.parse((await call(emu, 'GET', `/builds/${build.id}`)).json);
    expect(got).toMatchObject({ id: build.id, status: 'pending', metadata: { current_step: 'pending', step_progress: 0 }, started_at: null });

    const defaults = CreatedBuild.parse((await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } })).json);
    expect(defaults).toMatchObject({ platforms: ['macos', 'windows'], formats: ['vst3', 'au'], version_number: '1.1.0', build_number: 3 });

    const all = BuildList.parse((await call(emu, 'GET', '/builds')).json);
    expect(all).toMatchObject({ total: 3, limit: 20, offset: 0 });
    const page = BuildList.parse((await call(emu, 'GET', `/builds?project_id=${emu.projectId}&limit=1&offset=1`)).json);
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.builds).toHaveLength(1);
    const pending = BuildList.parse((await call(emu, 'GET', '/builds?status=pending')).json);
    expect(pending.total).toBe(2);
    expect(pending.builds.every((b) => b.status === 'pending')).toBe(true);
  });

  it('answers 401, 403 and 404 as the interface says', async () => {
    expect((await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId }, token: null })).status).toBe(401);
    expect((await call(emu, 'GET', '/builds', { token: null })).status).toBe(401);
    const other = await call(emu, 'POST', '/builds', { body: { project_id: emu.otherProjectId } });
    expect(other.status).toBe(403);
    expect(ErrorBody.parse(other.json).error).toBe('forbidden');
    expect((await call(emu, 'GET', `/builds?project_id=${emu.otherProjectId}`)).status).toBe(403);
    const missing = await call(emu, 'GET', '/builds/6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
  });

  it('cancels pending builds; a finished build gives 400 bad_request', async () => {
    const build = CreatedBuild.parse((await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } })).json);
    const cancelled = await call(emu, 'POST', `/builds/${build.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(CancelledBuild.parse(cancelled.json)).toEqual({ id: build.id, status: 'cancelled' });
    expect(Build.parse((await call(emu, 'GET', `/builds/${build.id}`)).json)).toMatchObject({ status: 'cancelled', completed_at: new Date(T0).toISOString() });
    const again = await call(emu, 'POST', `/builds/${build.id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'bad_request', details: { field: 'status', status: 'cancelled' } });
    const { id } = await seededBuild();
    expect((await call(emu, 'POST', `/builds/${id}/cancel`)).body.details).toMatchObject({ status: 'success' });
  });

  it('counts usage per calendar month on the emulator clock and refuses builds past the quota', async () => {
    const usage = BuildUsage.parse((await call(emu, 'GET', '/builds/usage')).json);
    expect(usage).toEqual({ period: '2030-04', used: 1, limit: 100, remaining: 99, extra_builds: 0, reset_at: '2030-05-01T00:00:00.000Z' });
    await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } });
    expect((await call(emu, 'GET', '/builds/usage')).body).toMatchObject({ used: 2, remaining: 98 });
    await ctl.clock({ now: '2030-05-01T00:00:00Z' });
    expect((await call(emu, 'GET', '/builds/usage')).body).toMatchObject({ period: '2030-05', used: 0, remaining: 100 });
    for (let i = 0; i < 100; i++) expect((await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } })).status).toBe(201);
    const over = await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ error: 'forbidden', details: { period: '2030-05', used: 100, limit: 100 } });
  });

  it('lists artifacts and answers downloads with {url, expires_at}; the URL serves the file until it expires', async () => {
    const { id, artifacts } = await seededBuild();
    expect(artifacts).toHaveLength(3);
    const artifact = artifacts[0]!;
    const res = await call(emu, 'GET', `/builds/${id}/download/${artifact.id}`);
    expect(res.status).toBe(200);
    const link = DownloadLink.parse(res.json);
    expect(link.expires_at).toBe(new Date(T0 + 15 * 60_000).toISOString());
    const file = await request(link.url);
    expect(file.statusCode).toBe(200);
    const bytes = Buffer.from(await file.body.arrayBuffer());
    expect(bytes.length).toBe(artifact.file_size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(artifact.checksum_sha256);
    const counted = ArtifactList.parse((await call(emu, 'GET', `/builds/${id}/artifacts`)).json).artifacts[0]!;
    expect(counted.download_count).toBe(1);

    // Flip the signature's first digit (always to a different one, so the URL really changes).
    const tampered = await request(link.url.replace(/signature=([0-9a-f])/, (_m, d: string) => `signature=${d === '0' ? '1' : '0'}`));
    expect(tampered.statusCode).toBe(403);
    await tampered.body.dump();
    await ctl.clock({ advance_ms: 15 * 60_000 + 1 });
    const expired = await request(link.url);
    expect(expired.statusCode).toBe(403);
    await expired.body.dump();

    const unknown = await call(emu, 'GET', `/builds/${id}/download/6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b`);
    expect(unknown.status).toBe(404);
    const pending = CreatedBuild.parse((await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } })).json);
    expect(ArtifactList.parse((await call(emu, 'GET', `/builds/${pending.id}/artifacts`)).json).artifacts).toEqual([]);
  });

  it('answers a 302 to the file with ?redirect=1 or when started with downloadRedirect', async () => {
    const { id, artifacts } = await seededBuild();
    const res = await request(`${emu.baseUrl}/builds/${id}/download/${artifacts[1]!.id}?redirect=1`, { headers: { authorization: `Bearer ${emu.token}` } });
    expect(res.statusCode).toBe(302);
    expect(String(res.headers.location)).toContain(`/__emulator/files/artifacts/${artifacts[1]!.id}/`);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    await res.body.dump();

    const redirecting = await startEmulator({ downloadRedirect: true });
    try {
      const build = (BuildList.parse((await call(redirecting, 'GET', '/builds')).json).builds[0]!).id;
      const first = ArtifactList.parse((await call(redirecting, 'GET', `/builds/${build}/artifacts`)).json).artifacts[0]!;
      const r = await request(`${redirecting.baseUrl}/builds/${build}/download/${first.id}`, { headers: { authorization: `Bearer ${redirecting.token}` } });
      expect(r.statusCode).toBe(302);
      await r.body.dump();
      const file = await request(String(r.headers.location));
      expect(file.statusCode).toBe(200);
      await file.body.dump();
    } finally {
      await redirecting.close();
    }
  });
});

describe('manual trigger', () => {
  const path = () => `/external-builds/${emu.projectId}/trigger`;

  it('accepts X-Webhook-Secret and creates a queued build; a tag ref sets the version', async () => {
    const res = await call(emu, 'POST', path(), {
      body: { ref: 'refs/tags/v2.3.4', commit_sha: 'abc1234', platforms: ['windows'], formats: ['vst3'], release_type: 'release' },
      token: null,
      headers: { 'x-webhook-secret': emu.webhookSecret },
    });
    expect(res.status).toBe(201);
    const result = TriggerResult.parse(res.json);
    expect(result.status).toBe('queued');
    expect(Build.parse((await call(emu, 'GET', `/builds/${result.build_id}`)).json)).toMatchObject({
      status: 'queued',
      version_number: '2.3.4',
      platforms: ['windows'],
    });
    const empty = await call(emu, 'POST', path(), { token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    expect(empty.status).toBe(201);
  });

  it('accepts X-Signature: sha256= HMAC of the exact raw body, and refuses a tampered body', async () => {
    const raw = '{"ref":"refs/heads/main",  "platforms":["macos"]}';
    const signature = `sha256=${createHmac('sha256', emu.webhookSecret).update(raw).digest('hex')}`;
    const ok = await call(emu, 'POST', path(), { raw, token: null, headers: { 'x-signature': signature, 'content-type': 'application/json' } });
    expect(ok.status).toBe(201);
    const tampered = await call(emu, 'POST', path(), { raw: raw.replace('macos', 'windows'), token: null, headers: { 'x-signature': signature } });
    expect(tampered.status).toBe(401);
    expect(ErrorBody.parse(tampered.json).error).toBe('unauthorized');
  });

  it('refuses a missing or wrong secret (401), an unknown project (404) and bad bodies (400)', async () => {
    expect((await call(emu, 'POST', path(), { body: {}, token: null })).status).toBe(401);
    expect((await call(emu, 'POST', path(), { body: {}, token: null, headers: { 'x-webhook-secret': 'nope' } })).status).toBe(401);
    expect((await call(emu, 'POST', path(), { body: {}, token: null, headers: { 'x-signature': 'sha1=abc' } })).status).toBe(401);
    const wrongProject = await call(emu, 'POST', `/external-builds/${emu.otherProjectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    expect(wrongProject.status).toBe(401);
    const unknown = await call(emu, 'POST', '/external-builds/6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b/trigger', { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    expect(unknown.status).toBe(404);
    const bad = await call(emu, 'POST', path(), { body: { commit_sha: 'not hex!' }, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toMatchObject({ field: 'commit_sha' });
    const invalidSecret = await call(emu, 'POST', path(), { body: {}, token: null, headers: { 'x-webhook-secret': 'nope' } });
    expect(invalidSecret.text).not.toContain(emu.webhookSecret);
  });
});

describe('code hosting, repositories and SDK', () => {
  it('reports and disconnects the code-hosting connection', async () => {
    const status = HostingConnection.parse((await call(emu, 'GET', '/github-app-callback/status')).json);
    expect(status).toMatchObject({ connected: true, account_login: 'emulator-dev', account_type: 'User' });
    const off = await call(emu, 'DELETE', '/github-app-callback/disconnect');
    expect(SuccessMessage.parse(off.json)).toMatchObject({ success: true });
    expect(HostingConnection.parse((await call(emu, 'GET', '/github-app-callback/status')).json)).toMatchObject({ connected: false, account_login: null });
    expect(SuccessMessage.parse((await call(emu, 'DELETE', '/github-app-callback/disconnect')).json)).toMatchObject({ success: false });
    expect(SdkDescriptor.parse((await call(emu, 'GET', '/sdk/status')).json).github_connected).toBe(false);
    const discover = await call(emu, 'GET', '/plugin-repos/discover');
    expect(discover.status).toBe(403);
    expect(discover.body.details).toMatchObject({ connected: false });
    expect((await call(emu, 'GET', '/github-app-callback/status', { token: null })).status).toBe(401);
  });

  it('discovers, links, unlinks, and creates-and-links repositories', async () => {
    const repos = DiscoveredRepos.parse((await call(emu, 'GET', '/plugin-repos/discover')).json).repos;
    expect(repos.map((r) => r.full_name)).toContain('emulator-dev/tape-delay');

    const linked = await call(emu, 'POST', '/plugin-repos/link', { body: { project_id: emu.projectId, repo_full_name: 'emulator-dev/tape-delay', branch: 'main' } });
    expect(LinkResult.parse(linked.json)).toMatchObject({ success: true, project_id: emu.projectId });
    expect(String(linked.body.source_repo_url)).toMatch(/emulator-dev\/tape-delay$/);
    expect((await call(emu, 'POST', '/plugin-repos/link', { body: { project_id: emu.projectId, repo_full_name: 'someone/unknown', branch: 'main' } })).status).toBe(404);
    expect((await call(emu, 'POST', '/plugin-repos/link', { body: { project_id: emu.otherProjectId, repo_full_name: 'emulator-dev/tape-delay', branch: 'main' } })).status).toBe(403);

    expect(UnlinkResult.parse((await call(emu, 'POST', '/plugin-repos/unlink', { body: { project_id: emu.projectId } })).json).success).toBe(true);
    expect(UnlinkResult.parse((await call(emu, 'POST', '/plugin-repos/unlink', { body: { project_id: emu.projectId } })).json).success).toBe(false);

    const created = await call(emu, 'POST', '/plugin-repos/create-and-link', {
      body: { repo_full_name: 'emulator-dev/new-comp', name: 'New Compressor', description: 'a compressor', visibility: 'private' },
    });
    expect(created.status).toBe(201);
    const project = CreatedProject.parse(created.json);
    expect(project.name).toBe('New Compressor');
    // the new project belongs to the account: builds and codes work on it
    expect((await call(emu, 'POST', '/builds', { body: { project_id: project.project_id } })).status).toBe(201);
    expect((await call(emu, 'POST', '/plugin-activation/generate', { body: { project_id: project.project_id, max_activations: 1 } })).status).toBe(201);
    const dup = await call(emu, 'POST', '/plugin-repos/create-and-link', {
      body: { repo_full_name: 'emulator-dev/new-comp', name: 'x', description: '', visibility: 'public' },
    });
    expect(dup.status).toBe(400);
    expect(dup.body.details).toMatchObject({ field: 'repo_full_name' });
  });

  it('describes the SDK and hands out a download URL that serves it', async () => {
    const sdk = SdkDescriptor.parse((await call(emu, 'GET', '/sdk/status')).json);
    expect(sdk).toMatchObject({ available: true, github_connected: true });
    const download = SdkDownload.parse((await call(emu, 'GET', '/sdk/download')).json);
    expect(download.version).toBe(sdk.version);
    const file = await request(download.url);
    expect(file.statusCode).toBe(200);
    expect((await file.body.text()).length).toBeGreaterThan(0);
    expect((await call(emu, 'GET', '/sdk/download', { token: null })).status).toBe(401);
  });
});
