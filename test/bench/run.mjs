#!/usr/bin/env node
// `pnpm bench`: runs every benchmark module in this folder (or those named on the command line),
// prints each figure beside its same-run baseline, and writes them all to $BENCH_JSON when set.
// A benchmark module exports `async function run(): Promise<Figure[]>`, where a Figure is
// {name, value, unit, baseline?, ratio?, goal?}.
import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const modules = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const figures = [];
for (const file of modules) {
  console.log(`\n# ${file}`);
  const mod = await import(pathToFileURL(join(here, file)).href);
  const results = await mod.run();
  for (const f of results) {
    figures.push(f);
    const base = f.baseline === undefined ? '' : `  baseline ${fmt(f.baseline)} ${f.unit}`;
    const ratio = f.ratio === undefined ? '' : `  ratio ${f.ratio.toFixed(3)}x`;
    const goal = f.goal ? `  (goal ${f.goal})` : '';
    console.log(`${f.name.padEnd(48)} ${fmt(f.value).padStart(12)} ${f.unit}${base}${ratio}${goal}`);
  }
}

if (process.env.BENCH_JSON) {
  const out = figures.map(({ goal: _goal, ...f }) => f);
  writeFileSync(process.env.BENCH_JSON, JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote ${out.length} figures to ${process.env.BENCH_JSON}`);
}

function fmt(n) {
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3);
}
