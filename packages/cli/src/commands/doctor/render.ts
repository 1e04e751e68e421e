import type { Output } from '../../output.js';
import { SECTIONS, type Check, type Facts, type Level } from './report.js';

/** Shows the report: the JSON document with `--json`, else the checks by section with their fixes and a summary line. */
export function render(out: Output, checks: Check[], facts: Facts): { failed: number; warnings: number } {
  const failed = checks.filter((c) => c.level === 'failed').length;
  const warnings = checks.filter((c) => c.level === 'warning').length;
  if (out.json) {
    out.document({ ok: failed === 0, failed, warnings, ...facts, checks: checks.map(({ shown: _shown, ...c }) => c) });
  } else {
    const mark: Record<Level, string> = { ok: out.ok('ok     '), warning: out.warn('warning'), failed: out.bad('failed '), info: out.c.dim('info   ') };
    for (const section of SECTIONS) {
      const inSection = checks.filter((c) => c.section === section);
      if (inSection.length === 0) continue;
      out.line(out.c.bold(section));
      for (const c of inSection) {
        out.line(`  ${mark[c.level]}  ${c.shown ?? c.name}: ${c.detail}`);
        if (c.fix && c.level !== 'ok' && c.level !== 'info') out.line(`           ${out.c.dim('→')} ${c.fix}`);
      }
    }
    out.line();
    out.line(failed === 0 ? out.ok(`no problems found${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}`) : out.bad(`${failed} failed, ${warnings} warning${warnings === 1 ? '' : 's'}`));
  }
  return { failed, warnings };
}
