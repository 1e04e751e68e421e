import { createCipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { decodeKey, issueToken } from './auth.js';
import { DEFAULT_BUILD_SETTINGS, type ArtifactRecord, type BuildRecord, type EmulatorData, type Identity, type ProjectRecord, type RepoRecord } from './state.js';

export const ACCOUNT_LOGIN = 'emulator-dev';
export const SDK_VERSION = '1.4.0';

/** A fresh demo account: signing key, token, the demo project (`projectId` when given) and another owner's project. */
export async function createIdentity(nowMs: number, projectId: string = randomUUID()): Promise<Identity> {
  const signingKey = randomBytes(32).toString('base64url');
  const ownerId = randomUUID();
  return {
    signing_key: signingKey,
    token: await issueToken(decodeKey(signingKey), ownerId, nowMs),
    owner_id: ownerId,
    project_id: projectId,
    webhook_secret: `whsec_${randomBytes(24).toString('hex')}`,
    other_owner_id: randomUUID(),
    other_project_id: randomUUID(),
    other_webhook_secret: `whsec_${randomBytes(24).toString('hex')}`,
  };
}

/**
 * The bytes of an artifact file: a header naming it, then 64 to 256 KiB of AES-CTR keystream keyed
 * by its id and name. A pure function of the artifact, so the bytes are "stored" without holding
 * them: `file_size` and `checksum_sha256` are true of every download, across `--data` restarts.
 */
export function artifactBytes(artifactId: string, fileName: string): Buffer {
  const key = createHash('sha256').update(`${artifactId}\0${fileName}`).digest();
  const header = Buffer.from(`plugin-license emulator artifact\nid: ${artifactId}\nfile: ${fileName}\n`, 'utf8');
  const bodyLength = 65_536 + (key.readUInt32BE(0) % 196_608);
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return Buffer.concat([header, cipher.update(Buffer.alloc(bodyLength)), cipher.final()]);
}

export function sdkBytes(): Buffer {
  return Buffer.from(`plugin-license emulator SDK ${SDK_VERSION}\n`, 'utf8');
}

export function makeArtifact(platform: string, format: string, fileName: string, createdAt: string): ArtifactRecord {
  const id = randomUUID();
  const bytes = artifactBytes(id, fileName);
  return {
    id,
    platform,
    format,
    file_name: fileName,
    file_size: bytes.length,
    checksum_sha256: createHash('sha256').update(bytes).digest('hex'),
    is_signed: platform === 'macos',
    download_count: 0,
    created_at: createdAt,
  };
}

export function repoUrl(fullName: string): string {
  return `https://github.com/${fullName}`;
}

function repo(name: string, description: string, topics: string[]): RepoRecord {
  const fullName = `${ACCOUNT_LOGIN}/${name}`;
  return { name, full_name: fullName, description, html_url: repoUrl(fullName), topics, default_branch: 'main' };
}

/**
 * The start state: the demo project (linked to a repository, one finished build with three
 * artifacts), another owner's project, a connected code-hosting account, three repositories, no codes.
 */
export function createStartState(identity: Identity, nowMs: number): EmulatorData {
  const at = (offsetMs: number): string => new Date(nowMs + offsetMs).toISOString();
  const demo: ProjectRecord = {
    id: identity.project_id,
    owner_id: identity.owner_id,
    name: 'Demo Reverb',
    description: 'The emulator demo project',
    visibility: 'private',
    source_repo_url: repoUrl(`${ACCOUNT_LOGIN}/demo-reverb`),
    branch: 'main',
    webhook_secret: identity.webhook_secret,
    version: '1.0.0',
    next_build_number: 2,
    triggers: [],
    notifications: null,
  };
  const other: ProjectRecord = {
    id: identity.other_project_id,
    owner_id: identity.other_owner_id,
    name: 'Another Vendor Synth',
    description: "A project of another account; the demo token has no permission on it",
    visibility: 'private',
    source_repo_url: null,
    branch: null,
    webhook_secret: identity.other_webhook_secret,
    version: '1.0.0',
    next_build_number: 1,
    triggers: [],
    notifications: null,
  };
  const completed = at(-60_000);
  const build: BuildRecord = {
    id: randomUUID(),
    project_id: demo.id,
    status: 'success',
    version_number: '1.0.0',
    build_number: 1,
    platforms: ['macos', 'windows'],
    formats: ['vst3', 'au'],
    metadata: { current_step: 'completed', step_progress: 100 },
    queued_at: at(-600_000),
    started_at: at(-540_000),
    completed_at: completed,
    github_run_url: `${repoUrl(`${ACCOUNT_LOGIN}/demo-reverb`)}/actions/runs/1`,
    release_type: 'release',
    flags: { enableActivationKeys: true },
    clean_build: false,
    source: 'seed',
    ref: 'refs/tags/v1.0.0',
    commit_sha: 'a'.repeat(40),
    artifacts: [
      makeArtifact('macos', 'vst3', 'DemoReverb-1.0.0-macos.vst3.zip', completed),
      makeArtifact('macos', 'au', 'DemoReverb-1.0.0-macos.component.zip', completed),
      makeArtifact('windows', 'vst3', 'DemoReverb-1.0.0-windows.vst3.zip', completed),
    ],
    schedule: null,
  };
  return {
    version: 1,
    identity,
    projects: [demo, other],
    codes: [],
    builds: [build],
    hosting: { connected: true, account_login: ACCOUNT_LOGIN, account_type: 'User', connected_at: at(-3_600_000) },
    repos: [
      repo('demo-reverb', 'Demo reverb plugin', ['audio-plugin', 'juce']),
      repo('tape-delay', 'Tape delay plugin', ['audio-plugin']),
      repo('granular-synth', 'Granular synthesizer', ['audio-plugin', 'synth']),
    ],
    build_settings: { ...DEFAULT_BUILD_SETTINGS },
    deliveries: [],
  };
}
