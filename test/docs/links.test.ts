// Every Markdown link and image of the repository resolves inside it (issue 29: the docs stand
// alone), and the reader behind that check holds against hostile names and targets.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deadLinks, headingAnchors, markdownFiles, markdownLinks, repositoryRoot, trackedPaths } from './markdown-links.js';

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
});
