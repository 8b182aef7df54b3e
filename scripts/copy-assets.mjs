#!/usr/bin/env node
// Part of `npm run build`: tsc emits only .js from .ts, so the pages' static files (HTML, CSS
// and the browser script in src/http/pages/assets/) are copied beside the compiled modules.
// `node scripts/copy-assets.mjs OUT` copies them into another build (the bench builds into
// .cache/bench-dist); the default is dist/.
import { cpSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = resolve(root, process.argv[2] ?? 'dist');
const from = resolve(root, 'src/http/pages/assets');
const to = resolve(out, 'http/pages/assets');
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
