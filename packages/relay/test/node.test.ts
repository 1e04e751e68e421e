// The relay on Node: `plugin-license relay serve`, the built CLI, as a process.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { RUNTIME_COMMAND } from './helpers.js';
import { refusalSuite, relaySuite } from './suite.js';

const root = join(import.meta.dirname, '..', '..', '..');

it('pnpm relay:deno and pnpm relay:workerd run the scripts these tests start', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  expect(scripts['relay:deno']).toBe(`node ${relative(root, RUNTIME_COMMAND.deno[0]!)}`);
  expect(scripts['relay:workerd']).toBe(`node ${relative(root, RUNTIME_COMMAND.workerd[0]!)}`);
});

relaySuite('node');

refusalSuite('node', [
  ['RELAY_SIGNING_KEY missing', { RELAY_SIGNING_KEY: undefined }, /RELAY_SIGNING_KEY is missing: set it to the vendor's Ed25519 private key/],
  ['RELAY_SIGNING_KEY empty', { RELAY_SIGNING_KEY: '  ' }, /RELAY_SIGNING_KEY is missing/],
  ['RELAY_SIGNING_KEY a public key of 42 characters', { RELAY_SIGNING_KEY: 'A'.repeat(42) }, /RELAY_SIGNING_KEY is neither a PEM private key .* nor the base64url of a 32-byte Ed25519 seed/],
  ['RELAY_SIGNING_KEY a PEM of another kind', { RELAY_SIGNING_KEY: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----' }, /is a PUBLIC KEY block, not the PKCS#8 private key/],
  ['RELAY_SIGNING_KEY an encrypted PEM', { RELAY_SIGNING_KEY: '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAj\n-----END ENCRYPTED PRIVATE KEY-----' }, /an encrypted key; give the key unencrypted/],
  ['RELAY_SIGNING_KEY an RSA private key', { RELAY_SIGNING_KEY: '-----BEGIN PRIVATE KEY-----\nMIIBVAIBADANBgkqhkiG9w0BAQEFAASCAT4wggE6AgEAAkEAq7BFUpkGp3+LQmlQ\n-----END PRIVATE KEY-----' }, /RELAY_SIGNING_KEY is not an Ed25519 private key/],
  ['RELAY_SIGNING_KEY with an empty second entry', { RELAY_SIGNING_KEY: 'SEED,' }, /RELAY_SIGNING_KEY entry 2 is empty/],
  ['RELAY_SIGNING_KEY listing one key twice', { RELAY_SIGNING_KEY: 'SEED,SEED' }, /RELAY_SIGNING_KEY entries 1 and 2 are the same key/],
  ['RELAY_SERVICE_URL missing', { RELAY_SERVICE_URL: undefined }, /RELAY_SERVICE_URL is missing/],
  ['RELAY_SERVICE_URL plain http to another host', { RELAY_SERVICE_URL: 'http://service.example/functions/v1' }, /RELAY_SERVICE_URL uses http:\/\/ to service.example/],
  ['RELAY_SERVICE_URL without /functions/v1', { RELAY_SERVICE_URL: 'https://service.example/' }, /RELAY_SERVICE_URL does not end in \/functions\/v1/],
  ['RELAY_SERVICE_URL not a URL', { RELAY_SERVICE_URL: 'service.example' }, /RELAY_SERVICE_URL is not a valid URL/],
  ['RELAY_SERVICE_URL with credentials', { RELAY_SERVICE_URL: 'https://me:pw@service.example/functions/v1' }, /must not contain credentials/],
  ['RELAY_SERVICE_TOKEN missing', { RELAY_SERVICE_TOKEN: undefined }, /RELAY_SERVICE_TOKEN is missing/],
  ['RELAY_SERVICE_TOKEN with a space', { RELAY_SERVICE_TOKEN: 'ab cd' }, /RELAY_SERVICE_TOKEN holds spaces/],
  ['RELAY_APP missing', { RELAY_APP: undefined }, /RELAY_APP is missing/],
  ['RELAY_APP not a namespace', { RELAY_APP: '../acme' }, /RELAY_APP '..\/acme' is not a namespace/],
  ['RELAY_PROJECTS missing', { RELAY_PROJECTS: undefined }, /RELAY_PROJECTS is missing/],
  ['RELAY_PROJECTS with a name', { RELAY_PROJECTS: 'PROJECT,Acme Gain' }, /RELAY_PROJECTS entry 2 \('Acme Gain'\) is not a project id/],
  ['RELAY_PROJECTS only commas', { RELAY_PROJECTS: ',,' }, /RELAY_PROJECTS names no project/],
  ['RELAY_TICKET_DAYS 31, past the 30-day offline grace', { RELAY_TICKET_DAYS: '31' }, /RELAY_TICKET_DAYS must be a whole number from 1 to 30 \(at most the library's 30-day offline grace\), got '31'/],
  ['RELAY_TICKET_DAYS 0', { RELAY_TICKET_DAYS: '0' }, /RELAY_TICKET_DAYS must be a whole number from 1 to 30/],
  ['RELAY_TICKET_DAYS 1.5', { RELAY_TICKET_DAYS: '1.5' }, /RELAY_TICKET_DAYS must be a whole number/],
  ['RELAY_VALIDATE_CACHE_S -1', { RELAY_VALIDATE_CACHE_S: '-1' }, /RELAY_VALIDATE_CACHE_S must be a whole number from 0 to 86400/],
  ['RELAY_VALIDATE_CACHE_S two days', { RELAY_VALIDATE_CACHE_S: '172800' }, /RELAY_VALIDATE_CACHE_S must be a whole number from 0 to 86400/],
  ['a misspelled RELAY_ variable', { RELAY_TICKETS_DAYS: '7' }, /RELAY_TICKETS_DAYS is not a setting of the relay \(misspelled\?\)/],
]);
