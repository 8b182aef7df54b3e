import { readFileSync } from 'node:fs';

/**
 * The key holder's export-link builder (`/`): a static page, its script and its style sheet,
 * kept as real files in ./assets/ (the script is type-checked by `npm run check` against the
 * DOM; `npm run build` copies the folder to dist/). Read once at start: the page is static
 * (nothing interpolated), and every link in it is relative, so it works under BASE_PATH.
 *
 * The key is never part of a form submission: its input has no `name`, the form posts
 * (never GET, which would put fields into the address) and the script cancels the submit.
 */
const asset = (name: string): string => readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');

export const BUILDER_HTML = asset('builder.html');
export const BUILDER_CSS = asset('builder.css');
export const BUILDER_JS = asset('builder.js');
