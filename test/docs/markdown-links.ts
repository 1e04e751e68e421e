// The repository's Markdown links, read with marked's lexer (the CommonMark + GFM rules GitHub
// renders by), and the one rule they are judged by: a relative target is a file or folder the
// repository tracks, inside it, and an `#anchor` into a Markdown file names one of its headings.
// Documents named in running text (a source file's comments, a Markdown file's prose and code
// spans: `docs/cli.md`) are found by the rule a reader follows and then judged as links.
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, relative, sep } from 'node:path';
import { Lexer, type Token, type Tokens } from 'marked';
import { codeComments, commentStyle } from './code-comments.js';

/** A link or image as written in a Markdown file. */
export interface MarkdownLink {
  kind: 'link' | 'image' | 'definition' | 'html';
  target: string;
  /** The line of the file it is on (1-based; the first line holding the target). */
  line: number;
}

/** A link whose target does not resolve, in words a reader of the test's output can act on. */
export interface DeadLink {
  file: string;
  line: number;
  target: string;
  why: string;
}

/** Markdown files larger than this are not read (none of ours is near it). */
export const MAX_MARKDOWN_BYTES = 2_000_000;

const HTML_ATTRIBUTE = /<(?:img|a|source)\b[^>]*?\s(src|href)\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+)/gi;

function htmlTargets(html: string): string[] {
  const found: string[] = [];
  for (const m of html.matchAll(HTML_ATTRIBUTE)) {
    const value = m[2] as string;
    found.push(value.startsWith('"') || value.startsWith("'") ? value.slice(1, -1) : value);
  }
  return found.map((t) => t.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'"));
}

/** Every token below `tokens`, depth first (list items, table cells, inline tokens). */
function* walk(value: unknown): Generator<Token> {
  if (Array.isArray(value)) {
    for (const v of value) yield* walk(v);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const t = value as Record<string, unknown>;
  if (typeof t.type === 'string') yield t as unknown as Token;
  for (const key of ['tokens', 'items', 'header', 'rows']) if (key in t) yield* walk(t[key]);
}

/**
 * The links and images of one Markdown document: inline `[t](x)` and `![t](x)`, reference
 * definitions `[t]: x` (used or not), and `src`/`href` of `<img>`, `<a>` and `<source>` in HTML.
 * Code spans and fenced code are not links. Targets are as written (angle brackets and
 * backslash escapes removed, percent-encoding kept).
 */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  // Tokens come in document order: each is looked for after the previous one.
  let cursor = 0;
  const lineOf = (raw: string): number => {
    let at = markdown.indexOf(raw, cursor);
    if (at < 0) at = markdown.indexOf(raw);
    if (at < 0) return 0;
    cursor = at;
    return markdown.slice(0, at).split('\n').length;
  };
  for (const token of walk(Lexer.lex(markdown, { gfm: true }))) {
    if (token.type === 'link' || token.type === 'image') {
      const t = token as Tokens.Link | Tokens.Image;
      // A reference's use ([text][label], [label]) is checked at its definition.
      if (!t.raw.endsWith(')')) continue;
      links.push({ kind: token.type, target: t.href, line: lineOf(t.raw) });
    } else if (token.type === 'def') {
      const t = token as Tokens.Def;
      links.push({ kind: 'definition', target: t.href, line: lineOf(t.raw) });
    } else if (token.type === 'html') {
      const t = token as Tokens.HTML;
      const line = lineOf(t.raw);
      for (const target of htmlTargets(t.raw)) links.push({ kind: 'html', target, line });
    }
  }
  return links;
}

/** The plain text of a heading as GitHub renders it: code spans' text, links' text, no markup, no HTML. */
function headingText(tokens: readonly Token[] | undefined, fallback: string): string {
  if (tokens === undefined) return fallback;
  let text = '';
  for (const t of tokens) {
    if (t.type === 'html') continue;
    const inner = (t as { tokens?: Token[] }).tokens;
    if (inner !== undefined && inner.length > 0) text += headingText(inner, '');
    else if (t.type === 'escape' || t.type === 'text' || t.type === 'codespan') text += (t as { text: string }).text.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'");
    else if ('text' in t && typeof t.text === 'string') text += t.text;
  }
  return text;
}

/**
 * The anchors GitHub gives a Markdown file's headings (github-slugger's rule: lowercase, every
 * character that is not a letter, mark, digit, `_`, `-` or space dropped, spaces to `-`, a repeat
 * suffixed `-1`, `-2`, …), plus the `id`/`name` of HTML anchors written in it.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const token of walk(Lexer.lex(markdown, { gfm: true }))) {
    if (token.type === 'heading') {
      const h = token as Tokens.Heading;
      const base = headingText(h.tokens, h.text)
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
        .replace(/ /g, '-');
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    } else if (token.type === 'html') {
      for (const m of (token as Tokens.HTML).raw.matchAll(/<a\b[^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']/gi)) anchors.add(m[1] as string);
    }
  }
  return anchors;
}

/** The files git tracks (forward slashes, relative to the root), and the folders holding them. */
export interface Tracked {
  files: Set<string>;
  folders: Set<string>;
}

/** The files git tracks under `root`, and the folders holding them. */
export function trackedPaths(root: string): Tracked {
  const out = execFileSync('git', ['-c', 'core.quotePath=off', 'ls-files', '-z'], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
  const files = new Set(out.split('\0').filter((f) => f !== ''));
  const folders = new Set<string>(['']);
  for (const f of files) for (let d = posix.dirname(f); d !== '.' && !folders.has(d); d = posix.dirname(d)) folders.add(d);
  return { files, folders };
}

/**
 * A tracked file's text, read only when it is (or links, inside the repository, to) a regular
 * file of at most MAX_MARKDOWN_BYTES: a FIFO, a device or a link out of the repository is never
 * opened; otherwise why not.
 */
export function readTracked(root: string, rel: string): { text: string } | { why: string } {
  const path = join(root, ...rel.split('/'));
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    return { why: `cannot be resolved (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  if (!inside(realpathSync(root), real)) return { why: `is a link to ${real}, outside the repository` };
  const st = lstatSync(real);
  if (!st.isFile()) return { why: 'is not a regular file' };
  if (st.size > MAX_MARKDOWN_BYTES) return { why: `is larger than ${MAX_MARKDOWN_BYTES} bytes` };
  return { text: readFileSync(real, 'utf8') };
}

function inside(root: string, path: string): boolean {
  const r = relative(root, path);
  return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !isAbsolute(r));
}

/** The headings of the Markdown files a check looks into, read once per file. */
type AnchorsOf = (rel: string) => Set<string> | string;

function anchorReader(root: string, file: string, text: string | undefined): AnchorsOf {
  const cache = new Map<string, Set<string> | string>();
  return (rel) => {
    let a = cache.get(rel);
    if (a === undefined) {
      const read = rel === file && text !== undefined ? { text } : readTracked(root, rel);
      a = 'text' in read ? headingAnchors(read.text) : `the file ${read.why}`;
      cache.set(rel, a);
    }
    return a;
  };
}

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/**
 * THE rule: why the relative or `/`-rooted `target`, written in the tracked file `file`, does not
 * resolve, or undefined when it does. It resolves when it is a tracked file, or a folder holding
 * tracked files, inside the repository (a tracked link is followed and must stay inside), and
 * its `#anchor` (alone, or after a Markdown file) names a heading of that file. `from` is the
 * folder a relative target is read against (the file's own by default).
 */
function judgeTarget(root: string, file: string, target: string, tracked: Tracked, anchorsOf: AnchorsOf, from = posix.dirname(file)): string | undefined {
  const hash = target.indexOf('#');
  const pathPart = (hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash < 0 ? undefined : target.slice(hash + 1);
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathPart);
  } catch {
    return 'the target is not valid percent-encoding';
  }
  const joined = decoded === '' ? file : decoded.startsWith('/') ? posix.normalize(decoded.slice(1)) : posix.normalize(posix.join(from, decoded));
  const rel = joined.replace(/\/+$/, '') || '';
  if (rel === '..' || rel.startsWith('../')) return `it points outside the repository (${rel})`;
  const key = rel === '.' ? '' : rel;
  if (!tracked.files.has(key) && !tracked.folders.has(key)) {
    const hint = decoded.includes('\\') ? ' (a backslash is not a path separator on GitHub: use /)' : '';
    return `${key} is not a file or folder of the repository${hint}`;
  }
  if (tracked.files.has(key)) {
    // A tracked symbolic link: what it points to must be inside too.
    let real: string;
    try {
      real = realpathSync(join(root, ...key.split('/')));
    } catch {
      return `${key} is a link to nothing`;
    }
    if (!inside(realpathSync(root), real)) return `${key} is a link to ${real}, outside the repository`;
  }
  if (anchor !== undefined && /\.(md|markdown)$/i.test(key) && tracked.files.has(key)) {
    const anchors = anchorsOf(key);
    const wanted = decodeURIComponentSafe(anchor).toLowerCase();
    if (typeof anchors === 'string') return anchors;
    if (!anchors.has(wanted)) return `${key} has no heading with the anchor #${anchor}`;
  }
  return undefined;
}

/**
 * The dead links of the tracked Markdown file `file` (relative to `root`), by {@link judgeTarget}.
 * Skipped: targets with a scheme (http:, https:, mailto:, …) or protocol-relative.
 */
export function deadLinks(root: string, file: string, tracked = trackedPaths(root)): DeadLink[] {
  const source = readTracked(root, file);
  if ('why' in source) return [{ file, line: 0, target: file, why: `the file ${source.why}` }];
  const anchorsOf = anchorReader(root, file, source.text);
  const dead: DeadLink[] = [];
  for (const link of markdownLinks(source.text)) {
    const target = link.target.trim();
    if (target !== '' && EXTERNAL.test(target)) continue;
    const why = target === '' ? 'the target is empty' : judgeTarget(root, file, target, tracked, anchorsOf);
    if (why !== undefined) dead.push({ file, line: link.line, target: link.target, why });
  }
  return dead;
}

/** A document named in running text (a comment, a Markdown file's prose) where it was found. */
export interface NamedDocument {
  /** As written: `docs/cli.md`, `../../agent/README.md#logs`. */
  target: string;
  line: number;
}

/**
 * A document's name in running text: a token ending in `.md`, of letters, digits, `_`, `.`, `/`
 * and `-`, with an optional `#anchor`. Not a glob (`*.md`), a longer name (`a.md.bak`, `a.mdx`),
 * or part of a URL (`https://…/x.md`, `//host.example/x.md`: removed first).
 */
const DOCUMENT_NAME = /(?<![\w./-])([\w./-]*[\w-]\.md)(#[\w-]+)?(?![\w/-]|\.\w)/g;
const URL_TEXT = /[a-z][a-z0-9+.-]*:\/\/\S*|(?<![\w:/])\/\/[\w-]+(?:\.[\w-]+)+\/\S*/gi;

/** The documents `text` names, with the line each is on (`line` is the text's first line). */
export function namedDocuments(text: string, line = 1): NamedDocument[] {
  const plain = text.replace(URL_TEXT, (url) => ' '.repeat(url.length));
  const found: NamedDocument[] = [];
  for (const m of plain.matchAll(DOCUMENT_NAME)) {
    found.push({ target: m[0], line: line + (plain.slice(0, m.index).match(/\n/g)?.length ?? 0) });
  }
  return found;
}

/**
 * The prose of a Markdown document where a document may be named: its text and code spans
 * (headings, paragraphs, lists, tables), not fenced or indented code, HTML, or link targets
 * (those are links, checked by {@link deadLinks}).
 */
export function markdownProse(markdown: string): { text: string; line: number }[] {
  const pieces: { text: string; line: number }[] = [];
  let cursor = 0;
  for (const token of walk(Lexer.lex(markdown, { gfm: true }))) {
    const inner = (token as { tokens?: Token[] }).tokens;
    if (token.type !== 'codespan' && !(token.type === 'text' && (inner === undefined || inner.length === 0))) continue;
    let at = markdown.indexOf(token.raw, cursor);
    if (at < 0) at = markdown.indexOf(token.raw);
    if (at >= 0) cursor = at;
    pieces.push({ text: token.raw, line: at < 0 ? 0 : markdown.slice(0, at).split('\n').length });
  }
  return pieces;
}

/**
 * THE rule for a document named in running text, written in the tracked file `file`: why it does
 * not resolve, or undefined. A name that starts with `/` is read from the root, one that starts
 * with `./` or `../` from the file's folder; a bare name (`README.md`, `docs/cli.md`) from the
 * file's folder, then each folder above it up to the root, the nearest that holds it winning: as
 * a reader looks for it (`README.md` in a package's source is that package's README, and
 * `docs/cli.md` anywhere is the root's `docs/` folder). Then as a link: tracked, inside the
 * repository, its `#anchor` a heading.
 */
export function judgeNamedDocument(root: string, file: string, target: string, tracked: Tracked, anchorsOf: AnchorsOf = anchorReader(root, file, undefined)): string | undefined {
  if (/^\.{0,2}\//.test(target)) return judgeTarget(root, file, target, tracked, anchorsOf);
  const name = target.replace(/#.*$/, '');
  const looked: string[] = [];
  for (let from = posix.dirname(file); ; from = posix.dirname(from)) {
    const candidate = posix.normalize(posix.join(from, name));
    if (tracked.files.has(candidate) || tracked.folders.has(candidate)) return judgeTarget(root, file, target, tracked, anchorsOf, from);
    looked.push(from === '.' ? 'the root' : from);
    if (from === '.') break;
  }
  return `no tracked file is named ${name} in ${looked.join(', ')}`;
}

/**
 * The documents named in the comments of the tracked source file `file` (code-comments.ts says
 * which files and which comments), or in the prose of the tracked Markdown file `file`, that do
 * not resolve by {@link judgeNamedDocument}. Strings are never read: a test's fake names are data.
 */
export function deadDocumentNames(root: string, file: string, tracked = trackedPaths(root)): DeadLink[] {
  const source = readTracked(root, file);
  if ('why' in source) return [{ file, line: 0, target: file, why: `the file ${source.why}` }];
  // No name can end in `.md` in a file without that text: most source files are never parsed.
  if (!source.text.includes('.md')) return [];
  let pieces: { text: string; line: number }[];
  if (/\.md$/i.test(file)) pieces = markdownProse(source.text);
  else {
    const style = commentStyle(file, () => source.text.slice(0, source.text.indexOf('\n') >>> 0));
    pieces = style === undefined ? [] : codeComments(file, source.text, style);
  }
  const anchorsOf = anchorReader(root, file, /\.md$/i.test(file) ? source.text : undefined);
  const dead: DeadLink[] = [];
  for (const piece of pieces) {
    for (const named of namedDocuments(piece.text, piece.line)) {
      const why = judgeNamedDocument(root, file, named.target, tracked, anchorsOf);
      if (why !== undefined) dead.push({ file, line: named.line, target: named.target, why });
    }
  }
  return dead;
}

/** The tracked source files whose comments are checked (code-comments.ts's `commentStyle`), node_modules skipped. */
export function sourceFiles(root: string, tracked = trackedPaths(root)): string[] {
  return [...tracked.files]
    .filter((f) => !f.split('/').includes('node_modules'))
    .filter((f) => commentStyle(f, () => firstLine(root, f)) !== undefined)
    .sort();
}

function firstLine(root: string, file: string): string {
  const read = readTracked(root, file);
  return 'text' in read ? read.text.slice(0, read.text.indexOf('\n') >>> 0) : '';
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The tracked Markdown files (git ls-files '*.md'), node_modules skipped. */
export function markdownFiles(root: string, tracked = trackedPaths(root)): string[] {
  return [...tracked.files].filter((f) => /\.md$/i.test(f) && !f.split('/').includes('node_modules')).sort();
}

/** The repository that holds this file. */
export function repositoryRoot(from: string = dirname(new URL(import.meta.url).pathname)): string {
  return execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: from }).toString('utf8').trim();
}
