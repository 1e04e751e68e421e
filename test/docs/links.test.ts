// Every Markdown link and image of the repository resolves inside it (issue 29: the docs stand
// alone), every document a comment or a Markdown file's prose names does too (issue 35: the
// design documents live in docs/), and the readers behind those checks hold against hostile input.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeComments, commentStyle, type CommentStyle } from './code-comments.js';
import { deadDocumentNames, deadLinks, headingAnchors, markdownFiles, markdownLinks, namedDocuments, repositoryRoot, sourceFiles, trackedPaths } from './markdown-links.js';

describe('every tracked Markdown file', () => {
  const root = repositoryRoot();
  const tracked = trackedPaths(root);
  const files = markdownFiles(root, tracked);

  it('is found (git ls-files, node_modules skipped)', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('plugin/plugin_license/README.md');
    expect(files.some((f) => f.includes('node_modules'))).toBe(false);
  });

  it('links only to files, folders and headings of the repository', () => {
    const dead = files.flatMap((f) => deadLinks(root, f, tracked));
    // One line per dead link, so a failure says exactly what to fix.
    expect(dead.map((d) => `${d.file}:${d.line}: ${d.target}: ${d.why}`)).toEqual([]);
  });
});

describe('every document a comment or a Markdown file names', () => {
  const root = repositoryRoot();
  const tracked = trackedPaths(root);
  const sources = sourceFiles(root, tracked);

  it('is looked for in every kind of source file (by name, or by its #! line)', () => {
    for (const f of ['agent/src/protocol.ts', 'packaging/src/build.mjs', 'agent/bin/run-bundle.js', 'plugin/plugin_license/plc/plc.c', 'plugin/plugin_license/plc/plc.h', 'plugin/plugin_license/plc/plc.hpp', 'plugin/plugin_license/plugin_license.cpp', 'examples/installers/unix/uninstall.sh', 'examples/installers/windows/installer.nsi', 'examples/juce-plugin/CMakeLists.txt', 'examples/installers/macos/scripts/postinstall', '.ci/run']) {
      expect(sources).toContain(f);
    }
    expect(sources.some((f) => f.includes('node_modules') || f.endsWith('.json') || f.endsWith('.md'))).toBe(false);
  });

  it('is a file of the repository (found as a reader looks for it)', () => {
    const dead = [...sources, ...markdownFiles(root, tracked)].flatMap((f) => deadDocumentNames(root, f, tracked));
    expect(dead.map((d) => `${d.file}:${d.line}: ${d.target}: ${d.why}`)).toEqual([]);
  });
});

describe('the comment reader', () => {
  /** The documents named in the comments of `text`, a file named `file`, with their lines. */
  const named = (file: string, text: string, style: CommentStyle): string[] =>
    codeComments(file, text, style).flatMap((c) => namedDocuments(c.text, c.line)).map((n) => `${n.line} ${n.target}`);

  it('reads TypeScript and JavaScript comments by the compiler, never a string, a template or a regular expression', () => {
    const ts = [
      "#!/usr/bin/env node",
      "const a = '// no-string.md'; // one.md",
      "/* two.md */ const b = `${a} // no-template.md /* no-template2.md */`;",
      'const re = /\\/\\/ no-regex.md/; /** three.md',
      ' * three-b.md */',
      'function f(/* four.md */) { return re.test("/* no-double.md */"); }',
      'const t = `a ${`nested // no-nested.md`} b`;',
      '// five.md',
      'export { f, t };',
      '// six.md at the end, no newline',
    ].join('\n');
    const expected = ['2 one.md', '3 two.md', '4 three.md', '5 three-b.md', '6 four.md', '8 five.md', '10 six.md'];
    expect(named('x/a.ts', ts, 'script')).toEqual(expected);
    expect(named('x/a.mjs', ts, 'script')).toEqual(expected);
  });

  it('reads C and C++ comments, never a string, a character or a raw string', () => {
    const c = [
      'const char *s = "/* no-string.md */ \\" // no-escaped.md"; // one.md',
      "char q = '\"'; /* two.md",
      '   three.md */ char k = \'/\';',
      'const char *r = R"x(// no-raw.md )" )x"; // four.md',
      '// five.md \\',
      '   five-continued.md',
      'int x = 1; /* six.md */ int y = 2; // seven.md',
    ].join('\n');
    expect(named('x/a.cpp', c, 'c')).toEqual(['1 one.md', '2 two.md', '3 three.md', '4 four.md', '5 five.md', '6 five-continued.md', '7 six.md', '7 seven.md']);
  });

  it('reads whole-line comments of shell, CMake and NSIS files, never data after code', () => {
    expect(named('x/run.sh', ['#!/bin/sh', '# one.md', 'echo "# no-string.md" # no-trailing.md', '  # two.md', 'x=${y#no-pattern.md}'].join('\n'), 'hash')).toEqual(['2 one.md', '4 two.md']);
    expect(named('x/CMakeLists.txt', ['# one.md', 'message("# no-string.md")'].join('\n'), 'hash')).toEqual(['1 one.md']);
    expect(named('x/setup.nsi', ['; one.md', '# two.md', 'DetailPrint "; no-string.md"'].join('\n'), 'hash')).toEqual(['1 one.md', '2 two.md']);
  });

  it('knows a source file by its name, or by its #! line when it has no extension', () => {
    const cases: [string, string, CommentStyle | undefined][] = [
      ['a/b.ts', '', 'script'],
      ['a/b.d.mts', '', 'script'],
      ['a/b.cjs', '', 'script'],
      ['a/b.h', '', 'c'],
      ['a/b.hpp', '', 'c'],
      ['a/CMakeLists.txt', '', 'hash'],
      ['a/notes.txt', '# x', undefined],
      ['a/b.json', '', undefined],
      ['a/b.md', '', undefined],
      ['a/postinstall', '#!/bin/sh', 'hash'],
      ['a/run', '#!/usr/bin/env bash', 'hash'],
      ['a/tool', '#! /usr/bin/env node', 'script'],
      ['a/tool', '#!/usr/bin/python3', undefined],
      ['a/LICENSE', 'MIT License', undefined],
    ];
    for (const [file, first, style] of cases) expect([file, first, commentStyle(file, () => first)]).toEqual([file, first, style]);
  });

  it('finds document names, not globs, longer names or URLs', () => {
    const text = 'see docs/cli.md, ../README.md#files and `x_y.md`;\nnot *.md, a.md.bak, a.mdx, b.md5, https://example.com/y.md, //example.com/z.md or .md';
    expect(namedDocuments(text, 10)).toEqual([
      { target: 'docs/cli.md', line: 10 },
      { target: '../README.md#files', line: 10 },
      { target: 'x_y.md', line: 10 },
    ]);
  });
});

describe('the link reader', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A git repository holding `files` (tracked) and `untracked`, under a name with spaces and quotes. */
  function repo(files: Record<string, string>, extra: (root: string) => void = () => undefined): string {
    const parent = mkdtempSync(join(tmpdir(), 'md links '));
    dirs.push(parent);
    const root = join(parent, `re"po 'x' $HOME *`);
    mkdirSync(root);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(root, name, '..'), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    extra(root);
    execFileSync('git', ['init', '-q'], { cwd: root });
    execFileSync('git', ['add', '-A'], { cwd: root });
    return root;
  }

  it('reads inline links, images, reference definitions and HTML, never code', () => {
    const md = [
      '# Title',
      '',
      'An [inline](a.md "a title") link, an ![image](<p q.png>), a [use][ref] of a reference,',
      '<img src="img.png" alt="x"> and <a href=\'html.md\'>html</a>, [escaped](b\\(1\\).md).',
      '',
      '`[not](code-span.md)`',
      '',
      '```',
      '[not](fenced.md)',
      '```',
      '',
      '| a | b |',
      '|---|---|',
      '| [cell](cell.md) | - |',
      '',
      '- [item](item.md)',
      '',
      '[ref]: <ref target.md>',
      '[unused]: unused.md',
    ].join('\n');
    expect(markdownLinks(md).map((l) => [l.kind, l.target, l.line])).toEqual([
      ['link', 'a.md', 3],
      ['image', 'p q.png', 3],
      ['html', 'img.png', 4],
      ['html', 'html.md', 4],
      ['link', 'b(1).md', 4],
      ['link', 'cell.md', 14],
      ['link', 'item.md', 16],
      ['definition', 'ref target.md', 18],
      ['definition', 'unused.md', 19],
    ]);
  });

  it("gives headings GitHub's anchors", () => {
    const md = [
      '# plugin_license: licensing inside a JUCE plugin',
      '## Add it',
      '## Add it',
      '## `plugins install --from DIR`: places — and *says* it',
      '## Déjà vu, [linked](x.md) & 100%',
      '<a id="custom"></a>',
    ].join('\n\n');
    expect([...headingAnchors(md)]).toEqual([
      'plugin_license-licensing-inside-a-juce-plugin',
      'add-it',
      'add-it-1',
      'plugins-install---from-dir-places--and-says-it',
      'déjà-vu-linked--100',
      'custom',
    ]);
  });

  it('reports every target outside the repository, untracked, missing, or a missing heading; follows none into a FIFO', () => {
    const names = ['with space.md', 'star*.md', "quote'.md", 'dq".md', 'dollar$.md', 'back\\slash.md', 'new\nline.md', 'nön-ascii.md'];
    const files: Record<string, string> = { 'docs/pic.png': 'png', 'docs/guide.md': '# Guide\n\n## Ship your plugin\n\n## Step\n\n## Step\n\n[up](../README.md#top)\n' };
    for (const n of names) files[n] = `# ${n}\n`;
    const links = [
      // Resolve (nothing reported):
      '[a](<with space.md>)',
      '[a](with%20space.md)',
      '[b](star*.md)',
      "[c](quote'.md)",
      '[d](<dq".md>)',
      '[e](dollar$.md)',
      '[f](back%5Cslash.md)',
      '[g](new%0Aline.md)',
      '[h](nön-ascii.md)',
      '[h](n%C3%B6n-ascii.md)',
      '[folder](docs)',
      '[folder](docs/ "a title")',
      '[rooted](/docs/guide.md#ship-your-plugin)',
      '[repeat](docs/guide.md#step-1)',
      '[here](#top)',
      '[web](https://example.com/x.md) [mail](mailto:a@example.com) [proto](//example.com/y)',
      '<img src="docs/pic.png">',
      // Dead:
      '[glob](sta*.md)',
      '[outside](../outside.md)',
      '[far](docs/../../x.md)',
      '[untracked](untracked.md)',
      '[missing](missing.md)',
      '[empty-folder](empty/)',
      '[backslash](docs\\\\guide.md)',
      '[heading](docs/guide.md#no-such-heading)',
      '[here](#nowhere)',
      '[out-link](out.md)',
      '[zero](zero.md#x)',
      '[fifo](fifo-link.md#x)',
      '[empty]()',
      '<img src=\'missing.png\'>',
      '',
      '[unused]: missing-ref.md',
    ];
    const root = repo({ ...files, 'README.md': `# Top\n\n${links.join('\n')}\n` }, (r) => {
      writeFileSync(join(r, 'untracked.md'), '# not added\n');
      symlinkSync('/etc/hostname', join(r, 'out.md'));
      symlinkSync('/dev/zero', join(r, 'zero.md'));
      execFileSync('mkfifo', [join(r, 'pipe')]);
      symlinkSync('pipe', join(r, 'fifo-link.md'));
    });
    writeFileSync(join(root, '.git', 'info', 'exclude'), 'untracked.md\npipe\n');
    execFileSync('git', ['rm', '-q', '--cached', 'untracked.md'], { cwd: root });
    mkdirSync(join(root, 'empty'));
    const dead = deadLinks(root, 'README.md');
    expect(dead.map((d) => [d.target, d.why])).toEqual([
      ['sta*.md', 'sta*.md is not a file or folder of the repository'],
      ['../outside.md', 'it points outside the repository (../outside.md)'],
      ['docs/../../x.md', 'it points outside the repository (../x.md)'],
      ['untracked.md', 'untracked.md is not a file or folder of the repository'],
      ['missing.md', 'missing.md is not a file or folder of the repository'],
      ['empty/', 'empty is not a file or folder of the repository'],
      ['docs\\guide.md', 'docs\\guide.md is not a file or folder of the repository (a backslash is not a path separator on GitHub: use /)'],
      ['docs/guide.md#no-such-heading', 'docs/guide.md has no heading with the anchor #no-such-heading'],
      ['#nowhere', 'README.md has no heading with the anchor #nowhere'],
      ['out.md', 'out.md is a link to /etc/hostname, outside the repository'],
      ['zero.md#x', 'zero.md is a link to /dev/zero, outside the repository'],
      ['fifo-link.md#x', 'the file is not a regular file'],
      ['', 'the target is empty'],
      ['missing.png', 'missing.png is not a file or folder of the repository'],
      ['missing-ref.md', 'missing-ref.md is not a file or folder of the repository'],
    ]);
    // Lines point at the link.
    expect(dead.find((d) => d.target === 'missing.md')?.line).toBe(3 + links.indexOf('[missing](missing.md)'));
    // The guide's own link up to the README's first heading resolves.
    expect(deadLinks(root, 'docs/guide.md')).toEqual([]);
  });

  it('finds a document named in a comment or in prose as a reader looks for it, and reports the rest', () => {
    const root = repo({
      'README.md': '# Top\n',
      'docs/cli.md': '# CLI\n\n## Exit codes\n',
      'pkg/README.md': '# Pkg\n\n## Files\n',
      'pkg/src/a.ts': [
        '// README.md, README.md#files, ../README.md, docs/cli.md#exit-codes, /docs/cli.md and ./a.ts.md? no: resolve',
        "const fake = 'missing-in-a-string.md'; // cli.md",
        '/* docs/gone.md, docs/cli.md#nowhere, ../../../outside.md, ./here.md */',
        'export { fake };',
      ].join('\n'),
      'pkg/src/b.c': '/* cli.md */ const char *s = "fake.md";\n',
      'pkg/run.sh': '#!/bin/sh\n# cli.md\necho "# fake.md"\n',
      'pkg/notes.md': ['# Notes', '', 'See `cli.md` and docs/cli.md, [a link](README.md).', '', '```', 'fenced.md', '```', ''].join('\n'),
    });
    const tracked = trackedPaths(root);
    const dead = ['pkg/src/a.ts', 'pkg/src/b.c', 'pkg/run.sh', 'pkg/notes.md', 'README.md'].flatMap((f) => deadDocumentNames(root, f, tracked));
    expect(dead.map((d) => `${d.file}:${d.line}: ${d.target}: ${d.why}`)).toEqual([
      'pkg/src/a.ts:1: ./a.ts.md: pkg/src/a.ts.md is not a file or folder of the repository',
      'pkg/src/a.ts:2: cli.md: no tracked file is named cli.md in pkg/src, pkg, the root',
      'pkg/src/a.ts:3: docs/gone.md: no tracked file is named docs/gone.md in pkg/src, pkg, the root',
      'pkg/src/a.ts:3: docs/cli.md#nowhere: docs/cli.md has no heading with the anchor #nowhere',
      'pkg/src/a.ts:3: ../../../outside.md: it points outside the repository (../outside.md)',
      'pkg/src/a.ts:3: ./here.md: pkg/src/here.md is not a file or folder of the repository',
      'pkg/src/b.c:1: cli.md: no tracked file is named cli.md in pkg/src, pkg, the root',
      'pkg/run.sh:2: cli.md: no tracked file is named cli.md in pkg, the root',
      'pkg/notes.md:3: cli.md: no tracked file is named cli.md in pkg, the root',
    ]);
    expect(sourceFiles(root, tracked)).toEqual(['pkg/run.sh', 'pkg/src/a.ts', 'pkg/src/b.c']);
  });
});
