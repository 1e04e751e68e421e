import { formatDuration } from '../format.js';
import type { Add, Facts, Level } from '../report.js';
import type { Probe } from './service.js';

export function clock(probe: Probe | undefined, facts: Facts, add: Add): void {
  const section = 'clock';
  if (probe?.serviceDate === undefined || !probe.isService) {
    add({ section, name: 'offset', level: 'info', detail: 'not measured (no answer from the service)' });
    return;
  }
  // The Date header has one-second resolution: offsets under two seconds are noise.
  const offset = probe.localAt - probe.serviceDate;
  if (facts.service) facts.service.clock_offset_ms = Math.abs(offset) < 2000 ? 0 : Math.round(offset);
  const abs = Math.abs(offset);
  const text = abs < 2000 ? 'in step with the service' : `${formatDuration(abs)} ${offset > 0 ? 'ahead of' : 'behind'} the service`;
  const level: Level = abs > 3_600_000 ? 'failed' : abs > 300_000 ? 'warning' : 'ok';
  add({ section, name: 'offset', level, detail: text, fix: "set this computer's clock from the network (automatic date and time); a clock set back more than an hour makes licenses clock_tampered until the next online check" });
}
