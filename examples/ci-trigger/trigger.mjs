#!/usr/bin/env node
// The same trigger from Node, with @plugin-license/api: the body is serialised once and signed
// byte for byte (X-Signature), so the secret never travels.
//
//   BASE_URL=... PROJECT_ID=... WEBHOOK_SECRET=... node trigger.mjs REF COMMIT_SHA [RELEASE_TYPE]
import { ServiceClient, isApiError } from '@plugin-license/api';

const [ref, commitSha, releaseType] = process.argv.slice(2);
const { BASE_URL, PROJECT_ID, WEBHOOK_SECRET } = process.env;
if (!ref || !commitSha || !BASE_URL || !PROJECT_ID || !WEBHOOK_SECRET) {
  process.stderr.write('usage: BASE_URL=... PROJECT_ID=... WEBHOOK_SECRET=... node trigger.mjs REF COMMIT_SHA [RELEASE_TYPE]\n');
  process.exit(2);
}
const client = new ServiceClient({ baseUrl: BASE_URL, userAgent: 'ci-trigger-example' });
try {
  const answer = await client.trigger(
    PROJECT_ID,
    { ref, commit_sha: commitSha, ...(releaseType ? { release_type: releaseType } : {}) },
    { signingSecret: WEBHOOK_SECRET },
  );
  process.stdout.write(`${JSON.stringify(answer)}\n`);
} catch (error) {
  // ApiError messages say what went wrong and never contain the secret.
  process.stderr.write(`trigger: ${isApiError(error) ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await client.close();
}
