import { arch, platform, release } from 'node:os';
import { programName } from '@plugin-license/licensing/executable';
import { CLI_VERSION } from '../../../exit.js';
import type { Add, Facts } from '../report.js';

export function versions(facts: Facts, add: Add): void {
  const section = 'versions';
  const v = { tool: programName(), version: CLI_VERSION, node: process.versions.node, os: platform(), os_release: release(), arch: arch() };
  facts.versions = v;
  add({ section, name: 'tool', level: 'info', detail: `${v.tool} ${v.version}` });
  add({ section, name: 'node', level: 'info', detail: v.node });
  add({ section, name: 'os', level: 'info', detail: `${v.os} ${v.os_release} ${v.arch}` });
}
