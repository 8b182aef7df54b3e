// @ts-check
/*
 * The builder page's "Who fetches your list" block (CONTRACT §12): one table of /api/me's
 * consumers — who fetched, which version, when, and whether it is behind. Its own script, so
 * builder.js only announces the account it checked: the `price-export:account` event, with
 * the /api/me answer as its detail, or null when the key is forgotten.
 */
'use strict';
(function () {
  /** @type {Record<string, string>} */
  var NAMES = { google: 'Google', yandex: 'Yandex', '1c': '1C', bitrix: 'Bitrix', browser: 'Browser', curl: 'curl', wget: 'wget', 'python-requests': 'Python requests', other: 'Other' };
  /**
   * @param {HTMLTableRowElement} row
   * @param {string} text
   * @param {string} [className]
   */
  function cell(row, text, className) {
    var td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    row.append(td);
  }
  /** @param {string} id */
  function byId(id) {
    var node = document.getElementById(id);
    if (!node) throw new Error('the page has no #' + id);
    return node;
  }
  document.addEventListener('price-export:account', function (event) {
    var me = /** @type {CustomEvent} */ (event).detail;
    var section = byId('consumers');
    section.hidden = !me;
    if (!me) return;
    /** @type {{ client_class: string, client_address: string, last_fetch_at: string, last_version: number | null, last_status: number, fetches_24h: number, behind: boolean }[]} */
    var consumers = me.consumers || [];
    var table = byId('consumers-table');
    var body = /** @type {HTMLElement} */ (table.querySelector('tbody'));
    body.textContent = '';
    byId('consumers-empty').hidden = consumers.length > 0;
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
