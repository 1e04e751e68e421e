import { useRef, useState } from 'preact/hooks';
import { post, type License, type Snapshot } from '../api.js';
import { download } from '../files.js';
import { dateFormat, fromNow, productName, signedUntil, SOURCE_WORDS } from '../words.js';
import { reasonWords } from '../reason-words.js';
import { Message, useAction } from './action.js';
import { html } from './html.js';

export function LicenseCard({ license, snapshot, now }: { license: License; snapshot: Snapshot; now: number }) {
  const [busy, said, act] = useAction();
  const dialog = useRef<HTMLDialogElement>(null);
  const name = productName(snapshot.products, license.project_id);
  const id = `lic-${license.project_id}`;
  const checked = license.checked_at ?? license.validated_at;
  const movable = license.valid;
  const offline = license.source === 'offline';
  const signed = signedUntil(license);
  // The proof stays here to be saved again (a download cancelled or lost): this computer has
  // forgotten the license, so the card offers no second release.
  const [proof, setProof] = useState<{ document: string; file_name: string } | null>(null);
  const release = async (): Promise<void> => {
    dialog.current?.close();
    await act('Releasing…', async () => {
      if (!offline) {
        await post('/api/deactivate', { project_id: license.project_id });
        return 'Released: a slot of this code is free for another computer.';
      }
      const r = await post<{ document: string; file_name: string }>('/api/offline_release', { project_id: license.project_id });
      setProof(r);
      download(r.file_name, r.document);
      return `Released from this computer. Saved the release proof ${r.file_name} (in your downloads): on a computer that is online, confirm it in this license manager (offline steps, step 4) to free the slot.`;
    });
  };
  return html`<article aria-labelledby=${id}>
    <h3 id=${id}>${name}</h3>
    <p class="muted small mono">${license.project_id}</p>
    <p class=${`state ${license.valid ? 'ok' : 'bad'}`}>${license.valid ? 'Licensed on this computer.' : reasonWords(license.reason)}</p>
    ${signed ? html`<p class="small">Signed by the vendor until <time datetime=${signed.toISOString()}>${dateFormat.format(signed)}</time>.</p>` : null}
    <dl>
      <dt>Code</dt><dd class="mono">${license.code_hint ?? 'none'}</dd>
      ${license.activations !== null && license.max_activations !== null ? html`<dt>Computers</dt><dd>${license.activations} of ${license.max_activations} in use</dd>` : null}
      <dt>Source</dt><dd>${SOURCE_WORDS[license.source]}</dd>
      <dt>Last online check</dt><dd>${checked ? html`<time datetime=${checked} title=${dateFormat.format(new Date(checked))}>${fromNow(checked, now)}</time>` : license.source === 'offline' ? 'never (activated offline)' : 'never'}</dd>
      ${license.valid && license.grace_until
        ? html`<dt>${license.source === 'offline' ? 'Valid until' : 'Works offline until'}</dt><dd><time datetime=${license.grace_until}>${dateFormat.format(new Date(license.grace_until))}</time> (${fromNow(license.grace_until, now)})</dd>`
        : null}
    </dl>
    <div class="row">
      <button type="button" onClick=${() => act('Checking…', async () => {
        const r = await post<{ license: License }>('/api/refresh', { project_id: license.project_id });
        return r.license.valid ? 'Checked: licensed.' : { ok: false, text: `Checked: ${reasonWords(r.license.reason)}` };
      })} disabled=${busy !== null} aria-describedby=${id}>${busy === 'Checking…' ? busy : 'Check now'}</button>
      ${movable ? html`<button type="button" class="danger" onClick=${() => dialog.current?.showModal()} disabled=${busy !== null} aria-describedby=${id}>${busy === 'Releasing…' ? busy : 'Move to another computer…'}</button>` : null}
    </div>
    <${Message} said=${said} />
    ${proof ? html`<div class="row"><button type="button" onClick=${() => download(proof.file_name, proof.document)}>Save the release proof again</button></div>` : null}
    <dialog ref=${dialog} aria-labelledby=${`${id}-confirm`}>
      <h3 id=${`${id}-confirm`}>Move ${name} to another computer?</h3>
      ${offline
        ? html`<p>This computer forgets its offline activation and gives you a release proof file. Confirm that file on a computer that is online: that frees a slot of code ${license.code_hint ?? ''}, so you can activate it on another computer. ${name} stops working here until you activate it again.</p>`
        : html`<p>This releases the license from this computer: a slot of code ${license.code_hint ?? ''} is freed, so you can activate it on another computer. ${name} stops working here until you activate it again.</p>`}
      <div class="row">
        <button type="button" class="danger" onClick=${release}>${offline ? 'Release and download the proof' : "Release this computer's slot"}</button>
        <button type="button" onClick=${() => dialog.current?.close()}>Cancel</button>
      </div>
    </dialog>
  </article>`;
}
