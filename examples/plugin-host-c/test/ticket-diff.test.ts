// plc's ticket judge and the library's give one answer (docs/architecture.md: "A parser of bytes someone
// else wrote never crashes and agrees with its twin"): on every ticket of the fuzzer's corpus
// (every field of line 1 in every shape, MACs recomputed), on thousands more made by the fuzzer's
// own mutator, and on project ids with Unicode case-folding traps. plc runs under ASan and UBSan
// where clang has them. The corpus is checked in (fuzz/ticket-corpus) and must be what
// `ticket-diff corpus` makes today.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeTicket, judgeTicket, ticketKeyOf, type TicketFields } from '@plugin-license/licensing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, C_FLAGS, exampleDir, hasCc, hasTool } from './helpers/toolchain.js';

const CORPUS = join(exampleDir, 'fuzz', 'ticket-corpus');
// The reader of fuzz/ticket-shapes.h.
const READER = { app: 'acme-audio', projectId: '123e4567-e89b-12d3-a456-426614174000', now: 1_768_478_460, rawMachineId: '0123456789abcdef0123456789abcdef' };
const SANITIZERS = ['-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-g', '-O1'];
const hasSanitizers =
  hasTool('clang') &&
  spawnSync('clang', [...SANITIZERS, '-x', 'c', '-', '-o', '/dev/null'], { input: 'int main(void) { return 0; }\n', stdio: ['pipe', 'ignore', 'ignore'] }).status === 0;
if (hasCc && !hasSanitizers) console.log('ticket-diff: plc runs without ASan/UBSan: no clang with its sanitizer runtimes (Debian: apt-get install clang libclang-rt-dev)');

interface Answer {
  file: string;
  verdict: string;
  reason: string | null;
  problem: string;
}

describe.skipIf(!hasCc)('plc and the library judge every ticket alike', () => {
  let dir: string;
  let tool: string;
  const diff = (args: string[]): string => {
    const r = spawnSync(tool, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`ticket-diff ${args.slice(0, 3).join(' ')} failed (${r.status ?? r.signal}):\n${r.stderr}`);
    return r.stdout;
  };
  /** plc's answers for every file of `folder` (or one file), by name. */
  const plc = (paths: string[], projectId?: string): Map<string, Answer> => {
    const out = diff(['judge', ...(projectId === undefined ? [] : ['--project', projectId]), ...paths]);
    return new Map(out.trim().split('\n').map((l) => JSON.parse(l) as Answer).map((a) => [a.file, a]));
  };
  /** Every file of folder judged by both: the cases where they differ (none, when they agree). */
  const disagreements = (folder: string): { count: number; differ: string[] } => {
    const c = plc([folder]);
    const names = readdirSync(folder).sort();
    expect([...c.keys()]).toEqual(names);
    const differ: string[] = [];
    for (const name of names) {
      const lib = judgeTicket(readFileSync(join(folder, name)), READER);
      const mine = c.get(name)!;
      if (lib.verdict !== mine.verdict || lib.reason !== mine.reason) {
        differ.push(`${name}: plc ${mine.verdict}/${mine.reason} (${mine.problem}), library ${lib.verdict}/${lib.reason}${'problem' in lib ? ` (${lib.problem})` : ''}`);
      }
    }
    return { count: names.length, differ };
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-ticket-diff-'));
    tool = join(dir, 'ticket-diff');
    compile(hasSanitizers ? 'clang' : 'cc', [...C_FLAGS, ...(hasSanitizers ? SANITIZERS : []), 'test/ticket-diff.c', '-o', tool]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the checked-in corpus is what ticket-diff makes today (regenerate: UPDATE_TICKET_CORPUS=1)', () => {
    const made = join(dir, 'corpus');
    mkdirSync(made);
    diff(['corpus', made]);
    if (process.env.UPDATE_TICKET_CORPUS === '1') {
      rmSync(CORPUS, { recursive: true, force: true });
      mkdirSync(CORPUS);
      for (const name of readdirSync(made)) writeFileSync(join(CORPUS, name), readFileSync(join(made, name)));
    }
    const names = readdirSync(made).sort();
    expect(readdirSync(CORPUS).sort()).toEqual(names);
    for (const name of names) expect(readFileSync(join(CORPUS, name)).equals(readFileSync(join(made, name))), name).toBe(true);
    // What it covers: every answer a reader can give, and the shapes that once crashed plc.
    const answers = new Set([...plc([CORPUS]).values()].map((a) => `${a.verdict}/${a.reason}`));
    expect([...answers].sort()).toEqual(
      ['clock/clock_tampered', 'expired/grace_expired', 'not_licensed/cache_invalid', 'not_licensed/code_revoked', 'not_licensed/grace_expired', 'not_licensed/not_activated', 'tampered/cache_invalid', 'valid/null'].sort(),
    );
    expect(readFileSync(join(CORPUS, 'v.002'), 'utf8')).toMatch(/^\{"v":\[1\],/);
  });

  it('on every ticket of the corpus', () => {
    const { count, differ } = disagreements(CORPUS);
    expect(count).toBeGreaterThan(1000);
    expect(differ).toEqual([]);
  });

  it('on 4,000 tickets made by the fuzzer\'s mutator from the corpus (1 to 4 edits each, MACs recomputed)', () => {
    const made = join(dir, 'mutated');
    mkdirSync(made);
    diff(['mutate', '20260115', '4000', made]);
    const { count, differ } = disagreements(made);
    expect(count).toBe(4000);
    expect(differ).toEqual([]);
    // Not only refusals: the mutator keeps enough tickets valid, expired or not licensed.
    const verdicts = new Set([...plc([made]).values()].map((a) => a.verdict));
    for (const v of ['valid', 'tampered', 'not_licensed', 'expired']) expect(verdicts).toContain(v);
  });

  describe('project ids compare by ASCII lower case only: no Unicode case folding makes two ids one', () => {
    const key = ticketKeyOf(READER.rawMachineId, READER.app);
    const fields: TicketFields = { v: 1, app: READER.app, project_id: READER.projectId, valid: true, reason: null, source: 'online', code_hint: null, issued_at: READER.now - 60, valid_until: READER.now + 86_400 };
    const id = (tail: string): string => `123e4567-e89b-12d3-a456-4266141740${tail}`;
    // [what, the reader's id, the id in the ticket, the verdict both give]
    const cases: Array<[string, string, string, 'valid' | 'tampered']> = [
      ['ASCII upper case in the reader: folded', id('0A').toUpperCase(), id('0a'), 'valid'],
      ['ASCII upper case in the ticket: not the id written (ids are written in lower case)', id('0a'), id('0A'), 'tampered'],
      ['U+212A KELVIN SIGN in the reader is no k', id('0\u212a'), id('0k'), 'tampered'],
      ['k in the reader is no U+212A', id('0k'), id('0\u212a'), 'tampered'],
      ['U+0130 (I with a dot) in the reader is no i with U+0307', id('0\u0130'), id('0i\u0307'), 'tampered'],
      ['U+0130 in the reader is no i', id('0\u0130'), id('0i'), 'tampered'],
      ['U+017F LONG S is no s, and S is no U+017F', id('0\u017f'), id('0s'), 'tampered'],
      ['S in the reader is no U+017F', id('0S'), id('0\u017f'), 'tampered'],
      ['U+0131 DOTLESS I is no i', id('0\u0131'), id('0i'), 'tampered'],
      ['fullwidth A (U+FF21) is no fullwidth a (U+FF41)', id('0\uff21'), id('0\uff41'), 'tampered'],
      ['fullwidth a is no a', id('0\uff41'), id('0a'), 'tampered'],
      ['U+212B ANGSTROM SIGN is no U+00E5', id('0\u212b'), id('0\u00e5'), 'tampered'],
      ['U+00C5 is no U+00E5 (only ASCII folds)', id('0\u00c5'), id('0\u00e5'), 'tampered'],
      ['Greek capital sigma is no small sigma', id('0\u03a3'), id('0\u03c3'), 'tampered'],
      ['the same non-ASCII id on both sides: equal', id('0\u00e9'), id('0\u00e9'), 'valid'],
    ];
    it.each(cases)('%s', (_, reader, inTicket, verdict) => {
      const file = join(dir, 'unicode.ticket');
      writeFileSync(file, encodeTicket(key, { ...fields, project_id: inTicket }));
      const lib = judgeTicket(readFileSync(file), { ...READER, projectId: reader });
      const mine = plc([file], reader).get('unicode.ticket')!;
      expect({ plc: mine.verdict, library: lib.verdict }).toEqual({ plc: verdict, library: verdict });
      if (verdict === 'tampered') expect({ plc: mine.problem, library: 'problem' in lib ? lib.problem : '' }).toEqual({ plc: 'belongs to another project', library: 'belongs to another project' });
    });
  });
});
