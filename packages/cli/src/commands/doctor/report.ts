// The report's data: the checks in the order of docs/cli.md, and the values behind them for `--json`.

export type Level = 'ok' | 'warning' | 'failed' | 'info';

/** One line of the report: what was checked, what was seen, and what to do about it. */
export interface Check {
  section: Section;
  name: string;
  /** What the human report shows in place of `name` (a license's plugin name and project id); not in the JSON. */
  shown?: string;
  level: Level;
  detail: string;
  fix?: string;
}

/** The report's sections, in the order it shows them; each is one file of checks/. */
export const SECTIONS = ['versions', 'configuration', 'service', 'relay', 'token', 'clock', 'machine id', 'data folder', 'licenses', 'agent'] as const;
export type Section = (typeof SECTIONS)[number];

/** The report's values as data, for `--json`: each its own field, never inside prose. */
export interface Facts {
  versions?: { tool: string; version: string; node: string; os: string; os_release: string; arch: string };
  configuration?: Record<string, { value: unknown; source: string } | string | boolean | null>;
  machine?: { id: string; source: string; stable: boolean | null };
  service?: { base_url: string | null; reachable: boolean; is_the_service: boolean | null; status: number | null; latency_ms: number | null; clock_offset_ms: number | null };
  /** The signed tickets' side: the keys expected (ids), the relay, and the signer it lists (null: not asked or not listed). */
  relay?: { ticket_keys: string[]; ticket_keys_source: string; relay_url: string | null; reachable: boolean | null; signer: string | null; listed: string[] | null };
  licenses?: Array<Record<string, unknown>>;
  agent?: { socket: string; running: boolean; agent: string | null; protocol: number | null; check_ms: number | null };
}

/** How a check adds its lines to the report. */
export type Add = (c: Check) => void;
