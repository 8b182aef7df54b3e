/**
 * The builder page's "Who fetches your list" block (CONTRACT §12): one table of /api/me's
 * consumers — who fetched, which version, when, and whether it is behind. Its own section,
 * script and rules, so the page's main script only announces the account it checked (the
 * `price-export:account` event, detail = the /api/me answer, or null when forgotten).
 */
export const CONSUMERS_SECTION_HTML = `<section id="consumers" aria-labelledby="consumers-title" hidden>
  <h2 id="consumers-title">Who fetches your list</h2>
  <p id="consumers-empty" class="help" hidden>No downloads recorded yet.</p>
  <table id="consumers-table" hidden>
    <thead><tr><th scope="col">Client</th><th scope="col">Address</th><th scope="col">Last fetch</th><th scope="col">Has version</th><th scope="col">Status</th><th scope="col">Fetches (24 h)</th><th scope="col">State</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
`;

export const CONSUMERS_CSS = `#consumers table { border-collapse: collapse; width: 100%; font-size: .9rem; }
#consumers th, #consumers td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
#consumers td.behind { color: var(--warn); font-weight: 600; }
`;

export const CONSUMERS_JS = `'use strict';
(function () {
  var NAMES = { google: 'Google', yandex: 'Yandex', '1c': '1C', bitrix: 'Bitrix', browser: 'Browser', curl: 'curl', wget: 'wget', 'python-requests': 'Python requests', other: 'Other' };
  function cell(row, text, className) {
    var td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    row.append(td);
  }
  document.addEventListener('price-export:account', function (event) {
    var me = event.detail;
    var section = document.getElementById('consumers');
    section.hidden = !me;
    if (!me) return;
    var consumers = me.consumers || [];
    var table = document.getElementById('consumers-table');
    var body = table.querySelector('tbody');
    body.textContent = '';
    document.getElementById('consumers-empty').hidden = consumers.length > 0;
    table.hidden = consumers.length === 0;
    consumers.forEach(function (c) {
      var row = document.createElement('tr');
      cell(row, NAMES[c.client_class] || c.client_class);
      cell(row, c.client_address);
      cell(row, new Date(c.last_fetch_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
      cell(row, c.last_version === null ? 'none yet' : 'v' + c.last_version);
      cell(row, String(c.last_status));
      cell(row, String(c.fetches_24h));
      cell(row, c.behind ? 'Behind' : 'Up to date', c.behind ? 'behind' : '');
      body.append(row);
    });
  });
})();
`;
