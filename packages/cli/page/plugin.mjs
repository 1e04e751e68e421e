// The license manager's page (page/), built into the CLI: `import assets from 'manager-page:assets'`
// gives the page's files as strings, so the npm build and the packaged executable serve the same
// bytes with no file to find at run time. The page's script is one minified bundle (preact + htm);
// its style sheet is minified too.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
/** Browsers the page is written for: the ones a musician's computer has (2022 and later). */
const TARGET = ['chrome100', 'edge100', 'firefox100', 'safari15'];

/** The page's files: index.html, app.js, style.css. */
export async function pageAssets() {
  const common = { bundle: true, minify: true, write: false, target: TARGET, logLevel: 'silent', legalComments: 'none' };
  const [js, css] = await Promise.all([
    build({ ...common, entryPoints: [join(here, 'app.ts')], format: 'iife', platform: 'browser', tsconfig: join(here, 'tsconfig.json') }),
    build({ ...common, entryPoints: [join(here, 'style.css')], loader: { '.css': 'css' } }),
  ]);
  return {
    'index.html': readFileSync(join(here, 'index.html'), 'utf8'),
    'app.js': js.outputFiles[0].text,
    'style.css': css.outputFiles[0].text,
  };
}

/** Every file the page is made of (app.ts and the modules it imports, the document, the style sheet), for a watcher. */
function pageSources() {
  return readdirSync(here, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|json|html|css)$/.test(f) && !f.startsWith('screenshots'))
    .map((f) => join(here, f));
}

/** The esbuild plugin (tsup's esbuildPlugins) that resolves `manager-page:assets`. */
export function managerPage() {
  return {
    name: 'manager-page',
    setup(b) {
      b.onResolve({ filter: /^manager-page:assets$/ }, () => ({ path: 'assets', namespace: 'manager-page' }));
      b.onLoad({ filter: /.*/, namespace: 'manager-page' }, async () => ({
        contents: `export default ${JSON.stringify(await pageAssets())};`,
        loader: 'js',
        watchFiles: pageSources(),
      }));
    },
  };
}
