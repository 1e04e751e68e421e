import type { Plugin } from 'esbuild';
export function pageAssets(): Promise<Record<'index.html' | 'app.js' | 'style.css', string>>;
export function managerPage(): Plugin;
