import { useState } from 'preact/hooks';
import { html } from './html.js';

/** What an action said: words, and whether it went well. */
export interface Said {
  ok: boolean;
  text: string;
}

/** An action's outcome: words that went well, or words and whether they did. */
export type Outcome = string | Said;

/** A component's action: the label while it runs, what it said, and `act` to run one (false when it failed). */
export function useAction(): [busy: string | null, said: Said | null, act: (label: string, fn: () => Promise<Outcome>) => Promise<boolean>, setSaid: (s: Said | null) => void] {
  const [busy, setBusy] = useState<string | null>(null);
  const [said, setSaid] = useState<Said | null>(null);
  const act = async (label: string, fn: () => Promise<Outcome>): Promise<boolean> => {
    setBusy(label);
    setSaid(null);
    try {
      const outcome = await fn();
      setSaid(typeof outcome === 'string' ? { ok: true, text: outcome } : outcome);
      return true;
    } catch (err) {
      setSaid({ ok: false, text: err instanceof Error ? err.message : String(err) });
      return false;
    } finally {
      setBusy(null);
    }
  };
  return [busy, said, act, setSaid];
}

/** What the last action said, announced to a screen reader (`status`, or `alert` when it failed). */
export function Message({ said }: { said: Said | null }) {
  if (!said) return null;
  return html`<p class=${`message ${said.ok ? 'ok' : 'bad'}`} role=${said.ok ? 'status' : 'alert'}>${said.text}</p>`;
}
