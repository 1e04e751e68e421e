import { useState } from 'preact/hooks';
import { post, type License, type Product, type Snapshot } from '../api.js';
import { productName } from '../words.js';
import { reasonWords } from '../reason-words.js';
import { Message, useAction } from './action.js';
import { html } from './html.js';

/** The plugin a form acts for: a choice among the vendor's, or a project id typed in. */
export function ProjectField({ products, idPrefix, value, onInput }: { products: Product[]; idPrefix: string; value: string; onInput: (v: string) => void }) {
  if (products.length === 1) return null;
  if (products.length > 1) {
    return html`<label for=${`${idPrefix}-project`}>Plugin</label>
      <select id=${`${idPrefix}-project`} value=${value} onChange=${(e: Event) => onInput((e.target as HTMLSelectElement).value)}>
        ${products.map((p) => html`<option value=${p.project_id}>${p.name ?? p.project_id}</option>`)}
      </select>`;
  }
  return html`<label for=${`${idPrefix}-project`}>Project id</label>
    <input id=${`${idPrefix}-project`} type="text" value=${value} onInput=${(e: Event) => onInput((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} placeholder="123e4567-e89b-12d3-a456-426614174000" aria-describedby=${`${idPrefix}-project-help`} />
    <p id=${`${idPrefix}-project-help`} class="muted small">The plugin's project id, from your purchase email or the vendor.</p>`;
}

/**
 * The plugins the activation form offers: the vendor's, less those licensed on this computer (a
 * valid license is shown on its card, not offered again; a revoked, expired or released one is).
 */
function offeredProducts(snapshot: Snapshot): Product[] {
  const licensed = new Set(snapshot.licenses.filter((l) => l.valid).map((l) => l.project_id));
  return snapshot.products.filter((p) => !licensed.has(p.project_id));
}

export function ActivateForm({ snapshot }: { snapshot: Snapshot }) {
  const offered = offeredProducts(snapshot);
  const named = snapshot.products.length > 0;
  const [typed, setProject] = useState(offered[0]?.project_id ?? '');
  // A plugin chosen, then licensed meanwhile (by the plugin itself, or on another tab), is no
  // longer offered: the form acts for the first one that still is.
  const project = !named || offered.some((p) => p.project_id === typed) ? typed : (offered[0]?.project_id ?? '');
  const [code, setCode] = useState('');
  const [busy, said, act] = useAction();
  const only = offered.length === 1 ? offered[0] : undefined;
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const done = await act('Activating…', async () => {
      const r = await post<{ license: License }>('/api/activate', { project_id: project, code });
      return r.license.valid ? `Activated: ${productName(snapshot.products, r.license.project_id)} is licensed on this computer.` : { ok: false, text: reasonWords(r.license.reason) };
    });
    if (done) setCode('');
  };
  if (named && offered.length === 0) {
    // Every plugin of the vendor is licensed here: nothing to offer; what was just done stays said.
    const names = snapshot.products.map((p) => productName(snapshot.products, p.project_id));
    return html`<section aria-labelledby="activate-h">
      <h2 id="activate-h">Activation</h2>
      <p>${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} licensed on this computer: nothing to activate.</p>
      <${Message} said=${said} />
    </section>`;
  }
  return html`<section aria-labelledby="activate-h">
    <h2 id="activate-h">Activate${only ? ` ${only.name ?? 'the plugin'}` : ' a license'}</h2>
    <form onSubmit=${submit}>
      <${ProjectField} products=${offered} idPrefix="activate" value=${project} onInput=${setProject} />
      <label for="activate-code">Activation code</label>
      <input id="activate-code" type="text" value=${code} onInput=${(e: Event) => setCode((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} placeholder="XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" />
      <div class="row"><button type="submit" class="primary" disabled=${busy !== null}>${busy ?? 'Activate'}</button></div>
    </form>
    <${Message} said=${said} />
  </section>`;
}
