import { useEffect, useState } from 'preact/hooks';
import { live, type Snapshot, type View } from '../api.js';
import { ActivateForm } from './activate-form.js';
import { LicenseCard } from './license-card.js';
import { OfflineSection } from './offline-section.js';
import { SupportReport } from './support-report.js';
import { html } from './html.js';

function AgentDown({ agent }: { agent: Extract<Snapshot['agent'], { running: false }> }) {
  return html`<div class="notice" role="alert">
    <p><strong>The license agent is not running on this computer.</strong> Your plugins ask it whether they are licensed, and this page needs it too.</p>
    <p>Start it by reinstalling the vendor's software, or in a terminal: <code>${agent.start}</code> (or install it as a service, which starts with your computer: <code>${agent.install}</code>).</p>
    <p class="muted small">This page updates by itself once the agent runs.</p>
  </div>`;
}

// The live view starts when this module is loaded, before the first render.
let view: View = { snapshot: null, problem: null };
const viewers = new Set<(v: View) => void>();
live((change) => {
  view = { ...view, ...change };
  for (const v of viewers) v(view);
});

export function App() {
  const [{ snapshot, problem }, setView] = useState<View>(view);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    viewers.add(setView);
    setView(view);
    const tick = setInterval(() => setNow(Date.now()), 30_000);
    return () => {
      viewers.delete(setView);
      clearInterval(tick);
    };
  }, []);

  const header = html`<header><h1>License manager</h1>${snapshot ? html`<p class="muted">Licenses of <strong>${snapshot.namespace}</strong> on this computer</p>` : null}</header>`;
  if (problem && !snapshot) return html`<main>${header}<div class="notice" role="alert"><p>${problem}</p></div></main>`;
  if (!snapshot) return html`<main>${header}<p role="status">Connecting to the license manager…</p></main>`;
  const shown = new Set(snapshot.licenses.map((l) => l.project_id));
  const notYet = snapshot.products.filter((p) => !shown.has(p.project_id));
  return html`<main>
    ${header}
    ${problem ? html`<div class="notice" role="alert"><p>${problem}</p></div>` : null}
    ${!snapshot.agent.running ? html`<${AgentDown} agent=${snapshot.agent} />` : null}
    <section class="licenses" aria-labelledby="licenses-h">
      <h2 id="licenses-h">Your licenses</h2>
      ${snapshot.licenses.length === 0 ? html`<p>${snapshot.agent.running ? 'No license is activated on this computer yet.' : 'They are shown here once the license agent runs.'}</p>` : null}
      ${snapshot.licenses.map((l) => html`<${LicenseCard} key=${l.project_id} license=${l} snapshot=${snapshot} now=${now} />`)}
      ${snapshot.agent.running && notYet.length > 0 ? html`<p class="muted">Not activated here yet: ${notYet.map((p) => p.name ?? p.project_id).join(', ')}.</p>` : null}
    </section>
    ${snapshot.agent.running ? html`<${ActivateForm} snapshot=${snapshot} />` : null}
    <${OfflineSection} snapshot=${snapshot} />
    <${SupportReport} />
  </main>`;
}
