// The comments of the repository's source files, by each language's own lexical rules, so that
// what a comment names can be checked (markdown-links.ts) and what a string holds never is: a
// test's fake file names live in strings, a reader's pointers in comments.
import ts from 'typescript';

/** One comment as written, without its delimiters' meaning: the text and the line it starts on. */
export interface Comment {
  text: string;
  /** 1-based line of the comment's first character. */
  line: number;
}

/** How a file's comments are found. */
export type CommentStyle = 'script' | 'c' | 'hash';

const SCRIPT = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
const C_FAMILY = /\.(?:c|h|hpp|cpp)$/;
const HASH = /(?:\.(?:sh|nsi)|(?:^|\/)CMakeLists\.txt)$/;

/**
 * The comment style of a tracked file, or undefined when it is not a source file whose comments
 * are checked. By name: TypeScript and JavaScript (`.ts .mts .cts .js .mjs .cjs`), C and C++
 * (`.c .h .hpp .cpp`), shell, NSIS and CMake (`.sh .nsi CMakeLists.txt`); a file without an
 * extension by its `#!` line (`sh`, `bash`, `dash`: hash; `node`: script).
 */
export function commentStyle(file: string, firstLine: () => string): CommentStyle | undefined {
  if (SCRIPT.test(file)) return 'script';
  if (C_FAMILY.test(file)) return 'c';
  if (HASH.test(file)) return 'hash';
  if (/\.[A-Za-z0-9]+$/.test(file.slice(file.lastIndexOf('/') + 1))) return undefined;
  const shebang = /^#!\s*(?:\S*\/)?(?:env\s+)?(\S+)/.exec(firstLine());
  if (shebang === null) return undefined;
  if (/^(?:sh|bash|dash)$/.test(shebang[1] as string)) return 'hash';
  if (shebang[1] === 'node') return 'script';
  return undefined;
}

/** The comments of `text`, a file of the given style, in order. */
export function codeComments(file: string, text: string, style: CommentStyle): Comment[] {
  if (style === 'script') return scriptComments(file, text);
  if (style === 'c') return cComments(text);
  return hashComments(file, text);
}

/**
 * TypeScript and JavaScript: the compiler's own parser, so a `//` inside a string, a template or
 * a regular expression is never taken for a comment. Every comment is trivia around a token: the
 * trailing comments of each token (same line) and the leading ones of the next (after a line end).
 */
function scriptComments(file: string, text: string): Comment[] {
  const kind = /\.(?:ts|mts|cts)$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const found = new Map<number, Comment>();
  const add = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) {
      if (!found.has(r.pos)) found.set(r.pos, { text: text.slice(r.pos, r.end), line: source.getLineAndCharacterOfPosition(r.pos).line + 1 });
    }
  };
  const visit = (node: ts.Node): void => {
    // JSDoc nodes describe comments the tokens' trivia already holds.
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length === 0) {
      add(ts.getLeadingCommentRanges(text, node.pos));
      add(ts.getTrailingCommentRanges(text, node.end));
      return;
    }
    for (const child of children) visit(child);
  };
  visit(source);
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
}

/**
 * C and C++: `/* … *\/` and `// …` (a backslash at a line's end continues it), outside string
 * and character literals (backslash escapes) and C++ raw strings (`R"delim( … )delim"`).
 */
function cComments(text: string): Comment[] {
  const comments: Comment[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  const advance = (to: number): void => {
    for (; i < to && i < n; i++) if (text[i] === '\n') line++;
  };
  while (i < n) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      comments.push({ text: text.slice(i, stop), line });
      advance(stop);
    } else if (c === '/' && next === '/') {
      let stop = i + 2;
      while (stop < n && !(text[stop] === '\n' && text[stop - 1] !== '\\')) stop++;
      comments.push({ text: text.slice(i, stop), line });
      advance(stop);
    } else if (c === 'R' && next === '"' && !/[\w]/.test(text[i - 1] ?? '')) {
      const open = text.indexOf('(', i + 2);
      const delimiter = open < 0 ? '' : text.slice(i + 2, open);
      const close = open < 0 || /[\s\\()]/.test(delimiter) ? -1 : text.indexOf(`)${delimiter}"`, open);
      advance(close < 0 ? i + 2 : close + delimiter.length + 2);
    } else if (c === '"' || c === "'") {
      let stop = i + 1;
      while (stop < n && text[stop] !== c && text[stop] !== '\n') stop += text[stop] === '\\' ? 2 : 1;
      advance(stop + 1);
    } else {
      advance(i + 1);
    }
  }
  return comments;
}

/**
 * Shell, CMake and NSIS: whole-line comments, a line whose first non-blank character is `#`
 * (NSIS also `;`), the `#!` first line excepted. A `#` after code on a line is not read: in a
 * shell word it may be data (`${x#pattern}`, `a#b`), and no lexer short of the shell's own tells.
 */
function hashComments(file: string, text: string): Comment[] {
  const marks = file.endsWith('.nsi') ? /^\s*[#;]/ : /^\s*#/;
  const comments: Comment[] = [];
  text.split('\n').forEach((l, index) => {
    if (index === 0 && l.startsWith('#!')) return;
    if (marks.test(l)) comments.push({ text: l, line: index + 1 });
  });
  return comments;
}
