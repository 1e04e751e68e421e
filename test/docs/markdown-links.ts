// The repository's Markdown links, read with marked's lexer (the CommonMark + GFM rules GitHub
// renders by), and the one rule they are judged by: a relative target is a file or folder the
// repository tracks, inside it, and an `#anchor` into a Markdown file names one of its headings.
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, relative, sep } from 'node:path';
import { Lexer, type Token, type Tokens } from 'marked';

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

/** The files git tracks under `root` (forward slashes, relative), and the folders holding them. */
export function trackedPaths(root: string): { files: Set<string>; folders: Set<string> } {
  const out = execFileSync('git', ['-c', 'core.quotePath=off', 'ls-files', '-z'], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
  const files = new Set(out.split('\0').filter((f) => f !== ''));
  const folders = new Set<string>(['']);
  for (const f of files) for (let d = posix.dirname(f); d !== '.' && !folders.has(d); d = posix.dirname(d)) folders.add(d);
  return { files, folders };
}

/**
 * A tracked Markdown file's text, read only when it is (or links, inside the repository, to) a
 * regular file of at most MAX_MARKDOWN_BYTES: a FIFO, a device or a link out of the repository is
 * never opened; otherwise why not.
 */
export function readMarkdown(root: string, rel: string): { text: string } | { why: string } {
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

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/**
 * THE rule: the dead links of the tracked Markdown file `file` (relative to `root`). Skipped:
 * targets with a scheme (http:, https:, mailto:, …) or protocol-relative. Checked: a relative or
 * `/`-rooted target is a tracked file, or a folder holding tracked files, inside the repository
 * (a tracked link is followed and must stay inside); `#anchor` (alone, or after a Markdown file)
 * names a heading of that file.
 */
export function deadLinks(root: string, file: string, tracked = trackedPaths(root)): DeadLink[] {
  const dead: DeadLink[] = [];
  const source = readMarkdown(root, file);
  if ('why' in source) return [{ file, line: 0, target: file, why: `the file ${source.why}` }];
  const text = source.text;
  const anchorsCache = new Map<string, Set<string> | string>();
  const anchorsOf = (rel: string): Set<string> | string => {
    let a = anchorsCache.get(rel);
    if (a === undefined) {
      const read = rel === file ? { text } : readMarkdown(root, rel);
      a = 'text' in read ? headingAnchors(read.text) : `the file ${read.why}`;
      anchorsCache.set(rel, a);
    }
    return a;
  };
  const realRoot = realpathSync(root);
  for (const link of markdownLinks(text)) {
    const say = (why: string): void => void dead.push({ file, line: link.line, target: link.target, why });
    const target = link.target.trim();
    if (target === '' || EXTERNAL.test(target)) {
      if (target === '') say('the target is empty');
      continue;
    }
    const hash = target.indexOf('#');
    const pathPart = (hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
    const anchor = hash < 0 ? undefined : target.slice(hash + 1);
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathPart);
    } catch {
      say('the target is not valid percent-encoding');
      continue;
    }
    const joined = decoded === '' ? file : decoded.startsWith('/') ? posix.normalize(decoded.slice(1)) : posix.normalize(posix.join(posix.dirname(file), decoded));
    const rel = joined.replace(/\/+$/, '') || '';
    if (rel === '..' || rel.startsWith('../')) {
      say(`it points outside the repository (${rel})`);
      continue;
    }
    const key = rel === '.' ? '' : rel;
    if (!tracked.files.has(key) && !tracked.folders.has(key)) {
      const hint = decoded.includes('\\') ? ' (a backslash is not a path separator on GitHub: use /)' : '';
      say(`${key} is not a file or folder of the repository${hint}`);
      continue;
    }
    if (tracked.files.has(key)) {
      // A tracked symbolic link: what it points to must be inside too.
      let real: string | undefined;
      try {
        real = realpathSync(join(root, ...key.split('/')));
      } catch {
        say(`${key} is a link to nothing`);
        continue;
      }
      if (!inside(realRoot, real)) {
        say(`${key} is a link to ${real}, outside the repository`);
        continue;
      }
    }
    if (anchor !== undefined && /\.(md|markdown)$/i.test(key) && tracked.files.has(key)) {
      const anchors = anchorsOf(key);
      const wanted = decodeURIComponentSafe(anchor).toLowerCase();
      if (typeof anchors === 'string') say(anchors);
      else if (!anchors.has(wanted)) say(`${key} has no heading with the anchor #${anchor}`);
    }
  }
  return dead;
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
