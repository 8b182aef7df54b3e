// @ts-check
/*
 * The export-link builder's script, served as its own file (the page's CSP allows no inline
 * script). Plain ES2017 for the browser, no build step; `npm run check` type-checks it against
 * the DOM (tsconfig.assets.json) and `npm run build` copies it to dist/.
 *
 * The key lives only in this page's memory: never stored (no storage, no cookies), never put
 * into the page's own address; it travels only in the X-Api-Key header to api/me and inside
 * the export address the holder asked for. Every address is relative to the page, so the
 * page works under BASE_PATH.
 */
'use strict';
(function () {
  var PREVIEW_LINES = 20;
  var PREVIEW_MAX_BYTES = 64 * 1024;
  var PREVIEW_LINE_CHARS = 400;
  var FORMAT_NAMES = { csv: 'CSV', tsv: 'TSV (tab-separated)', xlsx: 'Excel workbook (xlsx)', json: 'JSON', xml: 'XML', yml: 'YML (Yandex Market)', commerceml: 'CommerceML 2 (1C offers)', google: 'Google Merchant feed', ndjson: 'NDJSON (one item per line)' };
  // CONTRACT section 3: the summary is a workbook only; the price list's default is the legacy CSV.
  var KINDS = {
    campaign_data: { defaultFormat: 'csv', formats: null, path: '/WebApi/CampaignDataLatestGet/{api_key}' },
    export_latest: { defaultFormat: 'csv', formats: null, path: '/api/export/latest?key={api_key}' },
    summary: { defaultFormat: 'xlsx', formats: ['xlsx'], path: '/WebApi/SummaryExportLatestGet/{api_key}' },
    // CONTRACT section 11: its own formats; `since` is the version chosen below (the latest when none is).
    changes: { defaultFormat: 'json', formats: ['json', 'ndjson', 'csv', 'tsv', 'xml', 'yml'], path: '/api/export/changes?key={api_key}&since={version}' }
  };

  /** @param {string} id @returns {HTMLElement} */
  var el = function (id) { return /** @type {HTMLElement} */ (document.getElementById(id)); };
  /** A form control by id (the key and address inputs, the format and profile selects, the checkbox). */
  var control = function (/** @type {string} */ id) { return /** @type {HTMLInputElement} */ (document.getElementById(id)); };
  var checked = null;        // { key, me } of the last key /api/me accepted
  var checkSeq = 0;
  var submittedKey = null;   // the key of the last check, answered or still pending
  var previewSeq = 0;
  var previewAbort = null;
  var previewTimer = 0;
  var priceFormat = 'csv';   // the price list's format, kept while the summary is chosen

  function say(node, kind, text) {
    node.textContent = text;
    node.className = 'message' + (kind ? ' ' + kind : '');
    node.hidden = !text;
  }

  function retryAfter(response) {
    var seconds = Number(response.headers.get('Retry-After'));
    return seconds > 0 ? seconds + (seconds === 1 ? ' second' : ' seconds') : 'a minute';
  }

  async function problemMessage(response) {
    var problem = null;
    try { problem = await response.json(); } catch (e) { problem = null; }
    switch (problem && problem.code) {
      case 'missing_key': return 'Paste your API key first.';
      case 'invalid_key': return 'This key is not valid (401 invalid_key). Check that you pasted all of it, without spaces.';
      case 'revoked_key': return "This key has been revoked (401 revoked_key). Ask the store's administrator for a new key.";
      case 'expired_key': return "This key has expired (401 expired_key). Ask the store's administrator for a new key.";
      case 'key_scope': return /api\/me$/.test(response.url)
        ? "This key does not open api/me (403 key_scope), which this page reads to build addresses. Ask the store's administrator for a key that opens it, or use the addresses you were given."
        : 'This key does not open this export (403 key_scope): ' + problem.detail;
      case 'rate_limited': return 'Too many requests (429 rate_limited). Wait ' + retryAfter(response) + ' and try again.';
      case 'price_list_not_found': return 'This store has not published a price list yet (404 price_list_not_found).';
      case 'version_not_found': return 'This version is no longer kept (404 version_not_found). Check the key again to refresh the list of versions.';
      case 'profile_not_found': return 'This profile is gone (404 profile_not_found). Check the key again to refresh the list of profiles.';
      case 'unavailable': return 'The service is unavailable right now (503). Try again in ' + retryAfter(response) + '.';
      default:
        return problem && problem.title
          ? problem.title + ' (' + response.status + ')' + (problem.detail ? ': ' + problem.detail : '') + '.'
          : 'The service answered ' + response.status + '.';
    }
  }

  /** Hides everything that belonged to the previous key. */
  function forget() {
    checked = null;
    stopPreview();
    el('account').hidden = true;
    el('builder').hidden = true;
    document.dispatchEvent(new CustomEvent('price-export:account', { detail: null }));
    control('address').value = '';
  }

  async function checkKey(event) {
    event.preventDefault();
    var key = control('key').value.trim();
    var seq = ++checkSeq;
    submittedKey = key;
    forget();
    if (!key) {
      say(el('status'), 'error', 'Paste your API key first.');
      el('key').focus();
      return;
    }
    say(el('status'), '', 'Checking the key…');
    var response;
    try {
      response = await fetch('api/me', { headers: { 'X-Api-Key': key }, cache: 'no-store', credentials: 'omit' });
    } catch (e) {
      if (seq === checkSeq) say(el('status'), 'error', 'The service cannot be reached. Check the connection and try again.');
      return;
    }
    var message = response.ok ? null : await problemMessage(response);
    var me = response.ok ? await response.json() : null;
    if (seq !== checkSeq) return;
    if (message) {
      say(el('status'), 'error', message);
      return;
    }
    checked = { key: key, me: me };
    showAccount(me);
    document.dispatchEvent(new CustomEvent('price-export:account', { detail: me }));
    setUpBuilder(me);
    if (Object.keys(me.exports).length === 0) say(el('status'), 'warning', 'Key accepted: ' + me.store.name + '. It opens no export address (only api/me): ask the store for a key that opens its feed.');
    else if (me.price_list) say(el('status'), '', 'Key accepted: ' + me.store.name + '.');
    else say(el('status'), 'warning', 'This store has not published a price list yet. The addresses below are ready, but they answer 404 (price_list_not_found) until the first publication.');
  }

  function formatTime(iso) {
    var date = new Date(iso);
    return isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  }

  function showAccount(me) {
    el('store-name').textContent = me.store.name + ' (' + me.store.id + ')';
    el('store-currency').textContent = me.store.currency;
    el('key-name').textContent = (me.key.label ? me.key.label + ', ' : '') + 'starts with ' + me.key.prefix;
    el('key-scopes').textContent = describeScopes(me.key);
    var list = el('price-list');
    list.textContent = '';
    if (me.price_list) {
      var time = document.createElement('time');
      time.dateTime = me.price_list.published_at;
      time.textContent = formatTime(me.price_list.published_at);
      list.append('Version ' + me.price_list.version + ', published ', time,
        ' · ' + me.price_list.item_count + ' items, ' + me.price_list.available_count + ' in stock');
    } else {
      list.textContent = 'None published yet';
    }
    var profiles = el('profiles');
    profiles.textContent = '';
    if (me.profiles.length === 0) {
      profiles.textContent = 'None: exports carry the standard columns.';
    } else {
      var ul = document.createElement('ul');
      me.profiles.forEach(function (p) {
        var li = document.createElement('li');
        li.textContent = p.name + ' (id ' + p.id + ')';
        ul.append(li);
      });
      profiles.append(ul);
    }
    el('account').hidden = false;
  }

  // --- Key scopes (CONTRACT section 15, issue #19): one block, from here to "end of key scopes". ---
  // api/me lists only the addresses, formats and profiles this key opens; the page offers only those.
  function describeScopes(key) {
    var s = key.scopes;
    var parts = [];
    parts.push(s.addresses ? 'addresses: ' + s.addresses.join(', ') : 'every address');
    parts.push(s.formats ? 'formats: ' + s.formats.join(', ') : 'every format');
    parts.push(s.profiles ? 'profiles: ' + s.profiles.join(', ') + ' (one must be chosen)' : 'every profile');
    var text = parts.join(' · ');
    if (key.expires_at) text += ' · expires ' + formatTime(key.expires_at);
    return text;
  }

  /** Hides the kinds of address the key cannot open and picks the first it can; false when it opens none. */
  function limitKinds(me) {
    var radios = /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('input[name=kind]'));
    /** @type {HTMLInputElement[]} */
    var open = [];
    radios.forEach(function (radio) {
      var opens = Boolean(me.exports[radio.value]);
      radio.disabled = !opens;
      /** @type {HTMLElement} */ (radio.closest('label')).hidden = !opens;
      if (opens) open.push(radio);
    });
    var current = /** @type {HTMLInputElement | null} */ (document.querySelector('input[name=kind]:checked'));
    if (open.length > 0 && (!current || current.disabled)) open[0].checked = true;
    return open.length > 0;
  }

  /** A key limited to profiles opens no export without one: the "standard columns" choice goes. */
  function profileRequired(me) {
    return Boolean(me.key.scopes && me.key.scopes.profiles);
  }
  // --- end of key scopes ---

  function option(value, text) {
    var node = document.createElement('option');
    node.value = value;
    node.textContent = text;
    return node;
  }

  function setUpBuilder(me) {
    var profile = el('profile');
    profile.textContent = '';
    if (!profileRequired(me)) profile.append(option('', 'None: the standard columns'));
    me.profiles.forEach(function (p) { profile.append(option(String(p.id), p.name + ' (id ' + p.id + ')')); });
    if (!limitKinds(me)) return;
    // CONTRACT section 10: a retained version by version=N; held ones are not served.
    var version = el('version');
    version.textContent = '';
    version.append(option('', 'Latest (follows every publication)'));
    (me.versions || []).forEach(function (v) {
      if (v.state === 'retained') version.append(option(String(v.version), 'Version ' + v.version + ', ' + formatTime(v.published_at) + (v.source === 'rollback' ? ' (rollback)' : '')));
    });
    fillFormats();
    el('builder').hidden = false;
    update();
  }

  function chosenKind() {
    var radio = /** @type {HTMLInputElement | null} */ (document.querySelector('input[name=kind]:checked'));
    return radio ? radio.value : 'campaign_data';
  }

  /** The summary offers xlsx only; the price list's formats come from api/me. */
  function fillFormats() {
    var kind = KINDS[chosenKind()];
    var select = /** @type {HTMLSelectElement} */ (el('format'));
    var limited = checked.me.key.scopes && checked.me.key.scopes.formats;
    var formats = chosenKind() === 'changes'
      ? kind.formats.filter(function (f) { return !limited || limited.indexOf(f) !== -1; })
      : (kind.formats || checked.me.formats).filter(function (f) { return checked.me.formats.indexOf(f) !== -1; });
    select.textContent = '';
    formats.forEach(function (f) { select.append(option(f, FORMAT_NAMES[f] || f)); });
    select.value = formats.includes(priceFormat) ? priceFormat : formats.includes(kind.defaultFormat) ? kind.defaultFormat : formats[0];
    // The summary is always of the latest list.
    control('version').disabled = chosenKind() === 'summary';
    el('version-label').textContent = chosenKind() === 'changes' ? 'Changes since version' : 'Version';
  }

  /** The exact address: the api/me template with the key, and only the parameters that differ from the defaults. */
  function buildAddress() {
    var kindName = chosenKind();
    var kind = KINDS[kindName];
    // A template without a host (production without PUBLIC_URL or ALLOWED_HOSTS) is on this page's origin.
    var template = checked.me.exports[kindName];
    if (template.charAt(0) === '/') template = location.origin + template;
    var since = control('version').value || String(checked.me.price_list ? checked.me.price_list.version : 1);
    var address = template.replace('{api_key}', encodeURIComponent(checked.key)).replace('{version}', since);
    var params = [];
    var format = control('format').value;
    if (format && format !== kind.defaultFormat) params.push('format=' + encodeURIComponent(format));
    if (control('profile').value) params.push('profile_id=' + encodeURIComponent(control('profile').value));
    if (control('only-available').checked) params.push('only_available=true');
    if (control('version').value && kindName !== 'summary' && kindName !== 'changes') params.push('version=' + encodeURIComponent(control('version').value));
    if (params.length > 0) address += (address.indexOf('?') === -1 ? '?' : '&') + params.join('&');
    return address;
  }

  /**
   * What the preview fetches: the address itself when it is on this page's origin, else
   * (PUBLIC_URL names another host) the same path relative to this page.
   */
  function previewUrl(address) {
    var absolute = new URL(address, document.baseURI);
    if (absolute.origin === location.origin) return absolute.href;
    var kindName = chosenKind();
    var base = checked.me.exports[kindName].slice(0, -KINDS[kindName].path.length);
    return new URL(address.slice(base.length + 1), document.baseURI).href;
  }

  function update() {
    if (!checked) return;
    control('address').value = buildAddress();
    el('copy-status').textContent = '';
    schedulePreview();
    scheduleFeedCheck();
  }

  // --- Feed check (CONTRACT section 14, issue #17): one block, from here to "end of feed check". ---
  var CHECKED_FORMATS = ['yml', 'google', 'commerceml', 'xlsx'];
  var feedCheckTimer = null;
  var feedCheckSeq = 0;

  /** For the chosen format, when it has a check: each rule's count, and the first offenders of each broken rule. */
  function scheduleFeedCheck() {
    clearTimeout(feedCheckTimer);
    var seq = ++feedCheckSeq;
    var format = /** @type {HTMLSelectElement} */ (el('format')).value || 'csv';
    el('feed-check').hidden = true;
    if (chosenKind() === 'summary' || CHECKED_FORMATS.indexOf(format) === -1 || !checked.me.price_list) {
      say(el('feed-check-status'), '', 'The feed check covers ' + CHECKED_FORMATS.join(', ') + ' exports.');
      return;
    }
    say(el('feed-check-status'), '', 'Checking the feed…');
    feedCheckTimer = setTimeout(async function () {
      var params = ['key=' + encodeURIComponent(checked.key), 'format=' + format];
      var profileId = /** @type {HTMLSelectElement} */ (el('profile')).value;
      if (profileId) params.push('profile_id=' + encodeURIComponent(profileId));
      if (/** @type {HTMLInputElement} */ (el('only-available')).checked) params.push('only_available=true');
      try {
        var response = await fetch('api/export/check?' + params.join('&'), { cache: 'no-store', credentials: 'omit' });
        if (seq !== feedCheckSeq) return;
        if (!response.ok) return say(el('feed-check-status'), 'error', await problemMessage(response));
        var result = await response.json();
        if (seq !== feedCheckSeq) return;
        var broken = result.rules.filter(function (r) { return r.count > 0; });
        say(el('feed-check-status'), broken.length ? 'warning' : '', broken.length
          ? broken.length + ' of ' + result.rules.length + ' rules are broken (' + result.checked + ' items checked):'
          : 'All ' + result.rules.length + ' rules pass (' + result.checked + ' items checked).');
        el('feed-check').textContent = result.rules.map(function (r) {
          var line = (r.count ? '[!] ' : '[ok] ') + r.description + ': ' + r.count;
          return line + r.offenders.map(function (o) { return '\n    ' + (o.offer_id === null ? 'store' : o.offer_id) + ': ' + o.value; }).join('');
        }).join('\n');
        el('feed-check').hidden = false;
      } catch (e) {
        if (seq === feedCheckSeq) say(el('feed-check-status'), 'error', 'The feed check could not be loaded: the service cannot be reached.');
      }
    }, 300);
  }
  // --- end of feed check ---

  function stopPreview() {
    clearTimeout(previewTimer);
    previewSeq++;
    if (previewAbort) previewAbort.abort();
    previewAbort = null;
    say(el('preview-status'), '', '');
    clearTimeout(feedCheckTimer);
    feedCheckSeq++;
    say(el('feed-check-status'), '', '');
    el('feed-check').hidden = true;
    el('preview').hidden = true;
    el('preview').textContent = '';
  }

  // Debounced: every change of a choice would otherwise cost a request of the store's quota.
  function schedulePreview() {
    stopPreview();
    if (!checked.me.price_list) {
      say(el('preview-status'), 'warning', 'No preview: this store has not published a price list yet.');
      return;
    }
    say(el('preview-status'), '', 'Loading the preview…');
    previewTimer = setTimeout(showPreview, 300);
  }

  /** The body, or with limitLines its start: { bytes, complete }. */
  async function readBytes(response, limitLines) {
    var reader = response.body.getReader();
    var chunks = [];
    var size = 0;
    var lines = 0;
    var complete = false;
    for (;;) {
      var step = await reader.read();
      if (step.done) {
        complete = true;
        break;
      }
      chunks.push(step.value);
      size += step.value.length;
      if (limitLines) {
        for (var i = 0; i < step.value.length; i++) if (step.value[i] === 10) lines++;
        if (lines >= PREVIEW_LINES || size >= PREVIEW_MAX_BYTES) {
          reader.cancel().catch(function () {});
          break;
        }
      }
    }
    var bytes = new Uint8Array(size);
    var at = 0;
    chunks.forEach(function (c) { bytes.set(c, at); at += c.length; });
    return { bytes: bytes, complete: complete };
  }

  function decode(bytes, contentType) {
    var charset = /charset=([^;\s]+)/i.exec(contentType);
    try { return new TextDecoder(charset ? charset[1] : 'utf-8').decode(bytes); }
    catch (e) { return new TextDecoder('utf-8').decode(bytes); }
  }

  async function showPreview() {
    var seq = previewSeq;
    var address = control('address').value;
    var format = control('format').value;
    var controller = new AbortController();
    previewAbort = controller;
    try {
      var response = await fetch(previewUrl(address), { cache: 'no-store', credentials: 'omit', signal: controller.signal });
      if (!response.ok) {
        var message = await problemMessage(response);
        if (seq === previewSeq) say(el('preview-status'), 'error', message);
        return;
      }
      var type = response.headers.get('Content-Type') || '';
      if (format === 'xlsx') {
        var workbook = await readBytes(response, false);
        if (seq === previewSeq) say(el('preview-status'), '', 'Binary workbook, ' + workbook.bytes.length + ' bytes (' + type + '). Open it in Excel or LibreOffice.');
        return;
      }
      var start = await readBytes(response, true);
      if (seq !== previewSeq) return;
      var all = decode(start.bytes, type).split(/\r\n|\n|\r/);
      if (start.complete && all[all.length - 1] === '') all.pop();
      var whole = start.complete && all.length <= PREVIEW_LINES;
      var lines = all.slice(0, PREVIEW_LINES).map(function (line) {
        return line.length > PREVIEW_LINE_CHARS ? line.slice(0, PREVIEW_LINE_CHARS) + '…' : line;
      });
      say(el('preview-status'), '', (whole ? 'The whole file, ' + lines.length + ' lines' : 'The first ' + lines.length + ' lines of the file') + ' (' + type + '):');
      el('preview').textContent = lines.join('\n');
      el('preview').hidden = false;
    } catch (e) {
      if (seq === previewSeq && !(e && e.name === 'AbortError')) say(el('preview-status'), 'error', 'The preview could not be loaded: the service cannot be reached.');
    } finally {
      if (previewAbort === controller) previewAbort = null;
    }
  }

  async function copyAddress() {
    var address = control('address');
    var done = false;
    try {
      await navigator.clipboard.writeText(address.value);
      done = true;
    } catch (e) {
      address.select();
      try { done = document.execCommand('copy'); } catch (e2) { done = false; }
    }
    el('copy-status').textContent = done ? 'Copied.' : 'Select the address and copy it (Ctrl+C).';
  }

  function toggleKey() {
    var input = control('key');
    var show = input.type === 'password';
    input.type = show ? 'text' : 'password';
    el('show-key').textContent = show ? 'Hide' : 'Show';
    el('show-key').setAttribute('aria-pressed', String(show));
  }

  el('key-form').addEventListener('submit', checkKey);
  el('address-form').addEventListener('submit', function (event) { event.preventDefault(); });
  el('show-key').addEventListener('click', toggleKey);
  el('copy').addEventListener('click', copyAddress);
  // Editing the key drops what belonged to the checked one (and any answer still on its way).
  el('key').addEventListener('input', function () {
    if (submittedKey && control('key').value.trim() !== submittedKey) {
      submittedKey = null;
      checkSeq++;
      forget();
      say(el('status'), '', 'The key has changed: press “Check key”.');
    }
  });
  document.querySelectorAll('input[name=kind]').forEach(function (radio) {
    radio.addEventListener('change', function () { if (checked) { fillFormats(); update(); } });
  });
  el('format').addEventListener('change', function () {
    if (chosenKind() !== 'summary') priceFormat = control('format').value;
    update();
  });
  ['profile', 'only-available', 'version'].forEach(function (id) { el(id).addEventListener('change', update); });
})();
