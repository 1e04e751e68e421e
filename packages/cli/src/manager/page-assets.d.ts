// Resolved at build time by page/plugin.mjs: the page's files as strings.
declare module 'manager-page:assets' {
  const assets: Readonly<Record<'index.html' | 'app.js' | 'style.css', string>>;
  export default assets;
}
