/**
 * The key holder's export-link builder (`/`): a static page, its script and its style sheet.
 * They live in .ts modules because the build copies only .ts to dist; the page is static
 * (nothing interpolated), and every link in it is relative, so it works under BASE_PATH.
 *
 * The key is never part of a form submission: its input has no `name`, the form posts
 * (never GET, which would put fields into the address) and the script cancels the submit.
 */
import { CONSUMERS_CSS, CONSUMERS_SECTION_HTML } from './consumers-block.js';

export const BUILDER_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Export addresses · price-export</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="builder.css">
<script src="builder.js" defer></script>
<script src="consumers.js" defer></script>
</head>
<body>
<main>
<h1>Export addresses for your price list</h1>
<p class="lead">Paste your store's API key to see the store, its latest price list and the addresses your site,
1C importer or marketplace can download it from. The key stays in this page: it is not saved anywhere
and never put into this page's address.</p>

<form id="key-form" method="post" autocomplete="off" novalidate>
  <label for="key">API key</label>
  <div class="row">
    <input id="key" type="password" autocomplete="off" spellcheck="false" autocapitalize="off" aria-describedby="key-help">
    <button type="button" id="show-key" aria-pressed="false" aria-controls="key">Show</button>
    <button type="submit" id="check-key">Check key</button>
  </div>
  <p id="key-help" class="help">Starts with <code>pex_</code>, or is a key carried over from the previous service.</p>
</form>

<p id="status" class="message" role="status" aria-live="polite" hidden></p>

<section id="account" aria-labelledby="account-title" hidden>
  <h2 id="account-title">Store</h2>
  <dl>
    <dt>Store</dt><dd id="store-name"></dd>
    <dt>Currency</dt><dd id="store-currency"></dd>
    <dt>This key</dt><dd id="key-name"></dd>
    <dt>Latest price list</dt><dd id="price-list"></dd>
    <dt>Export profiles</dt><dd id="profiles"></dd>
  </dl>
</section>

${CONSUMERS_SECTION_HTML}
<section id="builder" aria-labelledby="builder-title" hidden>
  <h2 id="builder-title">Build an export address</h2>
  <form id="address-form" method="post" novalidate>
    <fieldset>
      <legend>Address</legend>
      <label class="choice"><input type="radio" name="kind" value="campaign_data" checked>
        Price list, key in the path <span class="hint">(the legacy address, <code>/WebApi/CampaignDataLatestGet/…</code>)</span></label>
      <label class="choice"><input type="radio" name="kind" value="export_latest">
        Price list, key in the query <span class="hint">(<code>/api/export/latest?key=…</code>)</span></label>
      <label class="choice"><input type="radio" name="kind" value="summary">
        Summary matrix against competitors <span class="hint">(<code>/WebApi/SummaryExportLatestGet/…</code>, Excel only)</span></label>
    </fieldset>
    <div class="fields">
      <div>
        <label for="format">Format</label>
        <select id="format"></select>
      </div>
      <div>
        <label for="profile">Profile</label>
        <select id="profile"></select>
      </div>
    </div>
    <label class="choice"><input type="checkbox" id="only-available"> Only items in stock</label>
  </form>

  <label for="address">Address to copy</label>
  <div class="row">
    <textarea id="address" rows="2" readonly spellcheck="false"></textarea>
    <button type="button" id="copy">Copy</button>
  </div>
  <p id="copy-status" class="help" role="status" aria-live="polite"></p>
  <p class="help">Parameters left at their defaults are left out, so the legacy address stays exactly the legacy address.</p>

  <h3 id="preview-title">Preview</h3>
  <p id="preview-status" class="message" role="status" aria-live="polite" hidden></p>
  <pre id="preview" tabindex="0" aria-labelledby="preview-title" hidden></pre>
</section>

<footer><a href="docs">API documentation</a></footer>
</main>
</body>
</html>
`;

export const BUILDER_CSS = `:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad; --bad: #a40e26; --bad-bg: #ffebe9; --warn: #7d4e00; --warn-bg: #fff8c5; --ok-bg: #eef6ff; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 52rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
.lead { color: var(--muted); margin-top: 0; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
label.choice { font-weight: normal; margin: .35rem 0; }
.hint, .help { color: var(--muted); font-size: .9rem; }
.help { margin: .25rem 0; }
.row { display: flex; gap: .5rem; align-items: stretch; }
.row > input, .row > textarea { flex: 1; min-width: 0; }
input[type=password], input[type=text], select, textarea { font: inherit; padding: .45rem .6rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: inherit; }
textarea, pre, code, #key { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
textarea { font-size: .9rem; resize: vertical; word-break: break-all; }
button { font: inherit; padding: .45rem .9rem; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
button[type=button] { background: #fff; color: var(--accent); }
:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; padding: .25rem .9rem .5rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.fields { display: flex; gap: 1.5rem; flex-wrap: wrap; }
.fields select { min-width: 14rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
dd ul { margin: 0; padding-left: 1.1rem; }
.message { padding: .6rem .8rem; border-radius: 6px; background: var(--ok-bg); }
.message.error { background: var(--bad-bg); color: var(--bad); font-weight: 600; }
.message.warning { background: var(--warn-bg); color: var(--warn); }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow: auto; max-height: 28rem; font-size: .85rem; line-height: 1.4; white-space: pre; }
footer { margin-top: 2.5rem; font-size: .9rem; }
a { color: var(--accent); }
[hidden] { display: none !important; }
${CONSUMERS_CSS}`;
