import { useRef, useState } from 'preact/hooks';
import { post, type License, type Snapshot } from '../api.js';
import { download, readSmallFile } from '../files.js';
import { dateFormat, productName } from '../words.js';
import { reasonWords } from '../reason-words.js';
import { ProjectField } from './activate-form.js';
import { Message, useAction } from './action.js';
import { html } from './html.js';

/** An offline document given as a file or as its pasted line: the fields, and what they hold. */
function useDocument(id: string, what: string) {
  const [pasted, setPasted] = useState('');
  const file = useRef<HTMLInputElement>(null);
  return {
    /** The pasted line, else the chosen file (refused when far larger than a document). */
    read: (): Promise<string> => (pasted.trim() !== '' ? Promise.resolve(pasted) : readSmallFile(file.current, `offline ${what} file`)),
    /** Empties both, once the document has been used. */
    clear: (): void => {
      setPasted('');
      if (file.current) file.current.value = '';
    },
    fields: html`<label for=${`${id}-file`}>${what.charAt(0).toUpperCase() + what.slice(1)} file</label>
      <input id=${`${id}-file`} type="file" ref=${file} accept=".txt,.json,text/plain,application/json" />
      <label for=${`${id}-text`}>Or paste the ${what} line</label>
      <textarea id=${`${id}-text`} value=${pasted} onInput=${(e: Event) => setPasted((e.target as HTMLTextAreaElement).value)} spellcheck=${false}></textarea>`,
  };
}

export function OfflineSection({ snapshot }: { snapshot: Snapshot }) {
  const [project, setProject] = useState(snapshot.products[0]?.project_id ?? '');
  const [code, setCode] = useState('');
  const [answerCode, setAnswerCode] = useState('');
  const [busy, said, act] = useAction();
  const request = useDocument('answer', 'request');
  const response = useDocument('import', 'response');
  const proof = useDocument('confirm', 'release proof');
  const requestFor = async (): Promise<void> => {
    await act('Making the request…', async () => {
      const r = await post<{ document: string; file_name: string }>('/api/offline_request', { project_id: project, code });
      download(r.file_name, r.document);
      return `Saved ${r.file_name} (in your downloads). Carry it to a computer that is online (step 2).`;
    });
  };
  const importResponse = async (): Promise<void> => {
    await act('Importing…', async () => {
      const r = await post<{ license: License }>('/api/offline_import', { document: await response.read() });
      response.clear();
      return r.license.valid
        ? `Imported: ${productName(snapshot.products, r.license.project_id)} is licensed on this computer${r.license.grace_until ? ` until ${dateFormat.format(new Date(r.license.grace_until))}` : ''}.`
        : { ok: false, text: reasonWords(r.license.reason) };
    });
  };
  const answer = async (): Promise<void> => {
    await act('Asking the service…', async () => {
      const r = await post<{ document: string; file_name: string; machine_name: string; code_hint: string; valid_until: string; renew: boolean }>('/api/offline_answer', { document: await request.read(), code: answerCode });
      download(r.file_name, r.document);
      request.clear();
      setAnswerCode('');
      return `Saved ${r.file_name} (in your downloads): ${r.renew ? 'renewed' : 'activated'} code ${r.code_hint} for ${r.machine_name || 'the offline computer'}, valid until ${dateFormat.format(new Date(r.valid_until))}. Carry it back to the offline computer (step 3).`;
    });
  };
  const confirmRelease = async (): Promise<void> => {
    await act('Asking the service…', async () => {
      const r = await post<{ code_hint: string; released: boolean; activations: number | null; max_activations: number | null }>('/api/offline_confirm', { document: await proof.read() });
      proof.clear();
      const slots = r.activations !== null && r.max_activations !== null ? ` (${r.activations} of ${r.max_activations} in use)` : '';
      return r.released
        ? `Released: a slot of code ${r.code_hint} is free${slots}; activate it on the new computer.`
        : `This release proof was confirmed before: the slot of code ${r.code_hint} is already free${slots}.`;
    });
  };
  return html`<section aria-labelledby="offline-h">
    <h2 id="offline-h">Activate a computer that is never online</h2>
    <p>A studio computer without internet is activated by carrying two small files, on a USB stick for example.</p>
    <ol class="steps">
      <li>
        <strong>On the offline computer</strong>, make a request file:
        <${ProjectField} products=${snapshot.products} idPrefix="offline" value=${project} onInput=${setProject} />
        <label for="offline-code">Activation code</label>
        <p id="offline-code-help" class="muted small">Or leave it empty and give it at step 2.</p>
        <input id="offline-code" type="text" aria-describedby="offline-code-help" value=${code} onInput=${(e: Event) => setCode((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} />
        <div class="row"><button type="button" onClick=${requestFor} disabled=${busy !== null}>Download the request file</button></div>
      </li>
      <li>
        <strong>On a computer that is online</strong>, open this license manager and answer the request
        (or run <code>${snapshot.program} offline activate REQUEST-FILE --out response.txt</code>):
        ${request.fields}
        <label for="answer-code">Activation code, when the request has none</label>
        <input id="answer-code" type="text" value=${answerCode} onInput=${(e: Event) => setAnswerCode((e.target as HTMLInputElement).value)} autocomplete="off" spellcheck=${false} />
        <div class="row"><button type="button" onClick=${answer} disabled=${busy !== null}>Answer and download the response file</button></div>
      </li>
      <li>
        <strong>Back on the offline computer</strong>, load the response:
        ${response.fields}
        <div class="row"><button type="button" class="primary" onClick=${importResponse} disabled=${busy !== null}>Import the response</button></div>
      </li>
      <li>
        <strong>To move an offline computer's license</strong>: on the offline computer, press "Move to another computer…" on the license above; it gives you a release proof file. On a computer that is online, confirm it here to free the slot:
        ${proof.fields}
        <div class="row"><button type="button" onClick=${confirmRelease} disabled=${busy !== null}>Confirm the release</button></div>
      </li>
    </ol>
    ${busy ? html`<p role="status">${busy}</p>` : null}
    <${Message} said=${said} />
  </section>`;
}
