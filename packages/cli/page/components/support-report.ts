import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { Message, useAction } from './action.js';
import { html } from './html.js';

export function SupportReport() {
  const [report, setReport] = useState<string | null>(null);
  const [busy, said, act, setSaid] = useAction();
  const make = async (): Promise<void> => {
    await act('Making the report…', async () => {
      const r = await post<{ text: string }>('/api/report');
      setReport(r.text);
      return 'The report is below. Every secret in it is masked.';
    });
  };
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(report ?? '');
      setSaid({ ok: true, text: 'Copied. Paste it into your message to support.' });
    } catch {
      setSaid({ ok: false, text: 'The browser did not allow copying: select the report and copy it yourself.' });
    }
  };
  return html`<section aria-labelledby="report-h">
    <h2 id="report-h">Support report</h2>
    <p>If something does not work, make this report and send it to the vendor's support. It says how this computer's licensing is set up; codes and keys in it are masked.</p>
    <div class="row">
      <button type="button" onClick=${make} disabled=${busy !== null}>${busy ?? (report ? 'Make it again' : 'Make the report')}</button>
      ${report ? html`<button type="button" onClick=${copy}>Copy</button>` : null}
    </div>
    <${Message} said=${said} />
    ${report ? html`<pre class="report" tabindex="0" aria-label="Support report">${report}</pre>` : null}
  </section>`;
}
