// plc's reader of the signed ticket (docs/signed-ticket.md) through the built plc-ticket, as a
// plugin built with the vendor's keys judges: every case of packages/licensing/test/signed-ticket-vectors
// placed as DATA/tickets/ID.ticket and ID.signed, with the manifest's verdict and the library's
// judgeLicenseFiles' (one rule, two readers); the flags (--key refused in words, --signed-file);
// and hostile files where the signed ticket goes.
import { spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judgeLicenseFiles, parseTicketKeys, verifySignedTicket, type SignedVerdict, type TicketVerdict } from '@plugin-license/licensing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNED_VECTORS_DIR, type SignedVectorCase, type SignedVectors } from '../../../../packages/licensing/test/signed-ticket-vectors.js';
import { compile, C_FLAGS, hasCc, PLC_C, PLC_DIR } from './helpers/toolchain.js';

const manifest = JSON.parse(readFileSync(join(SIGNED_VECTORS_DIR, 'manifest.json'), 'utf8')) as SignedVectors['manifest'];
const onDisk = (name: string): Buffer => readFileSync(join(SIGNED_VECTORS_DIR, name));
const VALID = manifest.cases.find((c) => c.name === 'valid-online')!;

interface Out {
  verdict: string;
  reason: string | null;
  source: string | null;
  code_hint: string | null;
  issued_at: number | null;
  valid_until: number | null;
  problem: string | null;
  path: string;
  signer?: string | null;
}

/** A verdict as the manifest states it. */
function expectedOf(o: Out): SignedVectorCase['expected'] {
  if (o.verdict !== 'valid') return { verdict: o.verdict, reason: o.reason } as SignedVectorCase['expected'];
  return { verdict: 'valid', reason: null, source: o.source, code_hint: o.code_hint ?? undefined, valid_until: o.valid_until } as SignedVectorCase['expected'];
}
function libraryOf(v: TicketVerdict | SignedVerdict): SignedVectorCase['expected'] {
  if (v.verdict !== 'valid') return { verdict: v.verdict, reason: v.reason } as SignedVectorCase['expected'];
  const f = 'signed' in v ? v.signed : v.ticket;
  return { verdict: 'valid', reason: null, source: f.source, code_hint: f.code_hint ?? undefined, valid_until: f.valid_until } as SignedVectorCase['expected'];
}

describe.skipIf(!hasCc)('plc\'s signed-ticket reader (plc-ticket --key)', () => {
  let dir: string;
  let tool: string;
  const run = (args: string[]): { code: number | null; json: Out | undefined; err: string } => {
    const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 20_000 });
    return { code: r.status, json: r.stdout.startsWith('{') ? (JSON.parse(r.stdout) as Out) : undefined, err: r.stderr };
  };
  /** A folder DATA/tickets/ of this user's own, with the case's files as ID.ticket and ID.signed; the ticket's path. */
  const place = (name: string, ticket: Buffer | null, signed: Buffer | null, projectId = VALID.project_id): string => {
    const tickets = join(dir, name, 'data', 'tickets');
    mkdirSync(tickets, { recursive: true, mode: 0o700 });
    const file = join(tickets, `${projectId.toLowerCase()}.ticket`);
    if (ticket !== null) writeFileSync(file, ticket, { mode: 0o600 });
    if (signed !== null) writeFileSync(file.replace(/\.ticket$/, '.signed'), signed, { mode: 0o600 });
    return file;
  };
  const caseArgs = (c: SignedVectorCase, file: string, keys = c.keys) => ['--app', c.app, '--now', String(c.now), '--machine-id', c.raw_machine_id, '--file', file, ...keys.flatMap((k) => ['--key', k]), c.project_id];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-signed-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('cc', [...C_FLAGS, 'tools/plc-ticket.c', join(dir, 'plc.o'), '-o', (tool = join(dir, 'plc-ticket'))]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(manifest.cases.map((c): [string, SignedVectorCase] => [`${c.name}: ${c.what}`, c]))('%s', (_, c) => {
    const file = place(c.name, c.ticket === null ? null : onDisk(c.ticket), c.signed === null ? null : onDisk(c.signed), c.project_id);
    const r = run(caseArgs(c, file));
    expect(r.err).toBe('');
    expect(expectedOf(r.json!)).toEqual(c.expected);
    expect(r.code).toBe(c.expected.verdict === 'valid' ? 0 : c.expected.verdict === 'none' ? 3 : 1);
    const library = judgeLicenseFiles(file, { keys: parseTicketKeys(c.keys), app: c.app, projectId: c.project_id, rawMachineId: c.raw_machine_id, now: c.now });
    expect(libraryOf(library)).toEqual(c.expected);
    // The signer once line 2 was read; never a key, a machine id or a code.
    if (c.keys.length > 0 && c.expected.verdict === 'valid' && c.signed !== null) expect(r.json!.signer).toMatch(/^[0-9a-f]{16}$/);
    const printed = JSON.stringify(r.json);
    for (const k of c.keys) expect(printed).not.toContain(k.replace(/^ed25519:/, ''));
    expect(printed).not.toContain(c.raw_machine_id);
    expect(printed).not.toContain(c.machine_id);
  });

  it('the signed fuzzer\'s corpus (fuzz/signed-corpus) is exactly the vectors\' signed tickets', () => {
    const corpus = join(PLC_DIR, 'fuzz', 'signed-corpus');
    const names = readdirSync(SIGNED_VECTORS_DIR).filter((n) => n.endsWith('.signed')).sort();
    expect(readdirSync(corpus).sort()).toEqual(names);
    for (const name of names) expect(readFileSync(join(corpus, name)).equals(onDisk(name)), name).toBe(true);
  });

  it('verifies identical bytes once (plc_verify_cache): a hit skips the signature, other bytes are verified, a failure is not remembered', () => {
    const kat = join(dir, 'ed25519-kat');
    compile('cc', [...C_FLAGS, 'test/ed25519-kat.c', '-o', kat]);
    const r = spawnSync(kat, { input: `cache ${join(SIGNED_VECTORS_DIR, 'valid-online.signed')} ${join(SIGNED_VECTORS_DIR, 'bad-signature.signed')} ${VALID.keys[0]}\n`, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    // GOOD verified then remembered; BAD refused and not remembered; BAD once the cache holds its
    // bytes is taken without a verification: the cache is keyed by the bytes and nothing else.
    expect(r.stdout).toBe('valid valid tampered kept valid\n');
  });

  it('judges 3,000 mutated signed tickets, each signed again by the trusted key, as the library does (verdict and reason)', () => {
    const kat = join(dir, 'ed25519-kat-diff');
    compile('cc', [...C_FLAGS, 'test/ed25519-kat.c', '-o', kat]);
    // vendor-key-1 of the vectors: its seed is the SHA-256 of its label (signed-ticket-vectors.ts).
    const seed = createHash('sha256').update('signed-ticket-vectors/vendor-key-1').digest();
    const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
    const kid = manifest.keys['vendor-key-1']!.kid;
    const keys = parseTicketKeys([VALID.keys[0]!]);
    const reader = { keys, app: VALID.app, projectId: VALID.project_id, machineId: VALID.machine_id, now: VALID.now };
    const base = onDisk(VALID.signed!).toString('utf8').split('\n')[0]!;
    const fields = JSON.parse(base) as Record<string, unknown>;
    // Values a field may take, each a JSON text: types, numbers written every way, escapes, nesting.
    const values = ['1', '1.0', '1e0', '-0', '0', '-1', '9007199254740991', '9007199254740992', '99999999999999999999', '1768478400', '1771070400', '"1768478400"', 'null', 'true', '[]', '{}', '[[[[1]]]]', '""', '"online"', '"offline"', '"Online"', '"\\u006fnline"', `"${kid}"`, `"${kid.toUpperCase()}"`, '"\\ud800"', '"a\\u0000b"', '"é"', '"acme-audio"', '"ACME-AUDIO"', `"${VALID.project_id}"`, `"${VALID.project_id.toUpperCase()}"`, `"${VALID.machine_id}"`, '"m1_"', '"\\"quoted\\""'];
    let seedState = 7;
    const rand = (n: number): number => {
      seedState = (seedState * 1103515245 + 12345) % 2147483648;
      return seedState % n;
    };
    const names = [...Object.keys(fields), 'extra', '\\u0061pp', 'v ', ''];
    const mutate = (line: string): string => {
      switch (rand(8)) {
        case 0: { // one field's value replaced
          const name = Object.keys(fields)[rand(Object.keys(fields).length)]!;
          return line.replace(new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*"|[^,}]*)`), `"${name}":${values[rand(values.length)]}`);
        }
        case 1: { // a field removed
          const name = Object.keys(fields)[rand(Object.keys(fields).length)]!;
          return line.replace(new RegExp(`,?"${name}":("(?:[^"\\\\]|\\\\.)*"|[^,}]*)`), '').replace('{,', '{');
        }
        case 2: // a field added or repeated, maybe under an escaped name
          return line.replace(/}$/, `,"${names[rand(names.length)]}":${values[rand(values.length)]}}`);
        case 3: // white space where JSON allows it, or where it does not
          return [line.replace(/:/g, ' : '), ` ${line}\t`, line.replace(/,/g, ',\r'), `\ufeff${line}`, line.replace('{', '{ ')][rand(5)]!;
        case 4: { // a byte changed
          const at = rand(line.length);
          return line.slice(0, at) + String.fromCharCode(32 + rand(95)) + line.slice(at + 1);
        }
        case 5: { // a byte removed or doubled
          const at = rand(line.length);
          return rand(2) === 0 ? line.slice(0, at) + line.slice(at + 1) : line.slice(0, at) + line[at] + line.slice(at);
        }
        case 6: // the whole line another JSON value
          return ['[]', '1', '"x"', 'null', '{}', line.slice(0, -1), `[${line}]`][rand(7)]!;
        default: // times moved around the reader's clock
          return line.replace(/"issued_at":\d+/, `"issued_at":${VALID.now + [-7200, -3600, 0, 3599, 3600, 3601, 86_400][rand(7)]!}`).replace(/"valid_until":\d+/, `"valid_until":${VALID.now + [-1, 0, 1, 86_400][rand(4)]!}`);
      }
    };
    const folder = join(dir, 'mutated');
    mkdirSync(folder, { recursive: true });
    const commands = [`trust ${VALID.keys[0]}`];
    const library: string[] = [];
    for (let i = 0; i < 3000; i++) {
      let line = base;
      for (let k = 1 + rand(3); k > 0; k--) line = mutate(line);
      line = line.replace(/\n/g, '');
      const bytes = Buffer.from(line, 'utf8');
      const signature = sign(null, Buffer.concat([Buffer.from('plugin-license/signed-ticket/v1\0'), bytes]), privateKey);
      const file = join(folder, `${i}.signed`);
      const text = Buffer.concat([bytes, Buffer.from(`\ned25519:${kid}:${signature.toString('base64url')}\n`)]);
      writeFileSync(file, text);
      commands.push(`judge ${file}`);
      const check = verifySignedTicket(text, reader);
      library.push(check.ok ? 'valid -' : `${check.reason === 'cache_invalid' ? 'tampered' : check.reason === 'clock_tampered' ? 'clock' : 'expired'} ${check.reason}`);
    }
    const r = spawnSync(kat, { input: `${commands.join('\n')}\n`, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(r.status, r.stderr).toBe(0);
    const plc = r.stdout.trimEnd().split('\n');
    const differ = library.map((l, i) => (l === plc[i] ? undefined : `${i}: library ${l}, plc ${plc[i]}: ${readFileSync(join(folder, `${i}.signed`), 'utf8').split('\n')[0]!.slice(0, 300)}`)).filter((d) => d !== undefined);
    expect(differ.slice(0, 10)).toEqual([]);
    // Every answer was reached, not only refusals.
    expect(new Set(library)).toEqual(new Set(['valid -', 'tampered cache_invalid', 'clock clock_tampered', 'expired grace_expired']));
  });

  it('reads the signed ticket from --signed-file instead of beside the ticket, by the same rules', () => {
    const file = place('signed-file', onDisk(VALID.ticket!), null);
    expect(run(caseArgs(VALID, file)).json).toMatchObject({ verdict: 'not_licensed', reason: 'unsigned' });
    const elsewhere = join(dir, 'signed-file', 'data', 'tickets', 'elsewhere.signed');
    writeFileSync(elsewhere, onDisk(VALID.signed!), { mode: 0o600 });
    const r = run([...caseArgs(VALID, file).slice(0, -1), '--signed-file', elsewhere, VALID.project_id]);
    expect(r.json).toMatchObject({ verdict: 'valid', source: 'online', signer: manifest.keys['vendor-key-1']!.kid });
    // A signed file given without a key: refused as a usage error (without keys the ticket alone decides).
    const noKey = run(['--app', VALID.app, '--now', String(VALID.now), '--machine-id', VALID.raw_machine_id, '--file', file, '--signed-file', elsewhere, VALID.project_id]);
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/at least one --key/);
  });

  it('refuses a bad --key with exit 2, saying which and why, and never judges with it', () => {
    const file = place('bad-keys', onDisk(VALID.ticket!), onDisk(VALID.signed!));
    const base = caseArgs(VALID, file, []);
    for (const [key, words] of [
      ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', /small order/],
      ['ed25519:abc', /43 characters/],
      [`${VALID.keys[0]!.slice(0, -1)}+`, /base64url/],
      [`ed25519:${Buffer.from('ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex').toString('base64url')}`, /canonically/],
    ] as const) {
      const r = run([...base.slice(0, -1), '--key', VALID.keys[0]!, '--key', key, VALID.project_id]);
      expect(r.code).toBe(2);
      expect(r.json).toBeUndefined();
      expect(r.err).toMatch(/--key \(key 2\)/);
      expect(r.err).toMatch(words);
    }
  });

  it('without --key judges as before (the ticket alone), and prints no signer', () => {
    const forged = manifest.cases.find((c) => c.name === 'forged-ticket')!;
    const file = place('no-keys', onDisk(forged.ticket!), null);
    const r = run(caseArgs(forged, file, []));
    expect(r.json).toMatchObject({ verdict: 'valid' });
    expect(r.json).not.toHaveProperty('signer');
    expect(run(caseArgs(forged, file)).json).toMatchObject({ verdict: 'not_licensed', reason: 'unsigned' });
  });

  it('takes no hostile file where the signed ticket goes: a link, a FIFO, a folder, over 4 KB are tampered, never a wait', () => {
    const hostile: [string, (signed: string) => void][] = [
      ['a link to a valid signed ticket', (s) => {
        const real = join(dir, 'real.signed');
        writeFileSync(real, onDisk(VALID.signed!), { mode: 0o600 });
        symlinkSync(real, s);
      }],
      ['a FIFO', (s) => expect(spawnSync('mkfifo', ['-m', '600', s]).status).toBe(0)],
      ['a folder', (s) => mkdirSync(s, { mode: 0o700 })],
      ['4097 bytes', (s) => writeFileSync(s, Buffer.concat([onDisk(VALID.signed!), Buffer.alloc(4097 - onDisk(VALID.signed!).length, 0x61)]), { mode: 0o600 })],
      ['writable by others', (s) => {
        writeFileSync(s, onDisk(VALID.signed!));
        chmodSync(s, 0o666);
      }],
    ];
    hostile.forEach(([what, make], i) => {
      const file = place(`hostile-${i}`, onDisk(VALID.ticket!), null);
      make(file.replace(/\.ticket$/, '.signed'));
      const started = Date.now();
      const r = run(caseArgs(VALID, file));
      expect({ what, verdict: r.json?.verdict, reason: r.json?.reason }).toEqual({ what, verdict: 'tampered', reason: 'cache_invalid' });
      expect(r.json!.problem).toMatch(/^the signed ticket/);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  });
});
