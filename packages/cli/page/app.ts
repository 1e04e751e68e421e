// The license manager page (docs/license-manager.md): what the musician sees. It talks only to the
// manager that served it (/api/*), which talks to the agent. preact + htm, bundled by plugin.mjs
// from this file: api.ts talks to the manager, words.ts says things, components/ draws them.
import { render } from 'preact';
import { App } from './components/app.js';
import { html } from './components/html.js';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
