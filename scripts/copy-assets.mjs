#!/usr/bin/env node
// Part of `npm run build`: tsc emits only .js from .ts, so the pages' static files (HTML, CSS
// and the browser script in src/http/pages/assets/) are copied beside the compiled modules.
import { cpSync, rmSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const from = new URL('src/http/pages/assets/', root);
const to = new URL('dist/http/pages/assets/', root);
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
