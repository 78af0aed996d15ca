// Bundled with copyq-mcp and run as `copyq eval -- <this script>`.
// The request is JSON on stdin; the reply is one JSON object on the last line of stdout:
// {"ok":true,...} or {"ok":false,"error":"..."}, with "made" when a write failed after changing
// CopyQ; lines before it say what a write has made so far. User data never enters the script text.
// All work for one tool call happens here, so each call costs one process.
// PROTOCOL (prepended by the gateway) holds the constants of the durable-write protocol
// (src/backend/protocol.rs), which the writes below follow step for step.
(function () {
  var MIME_TEXT = PROTOCOL.MIME_TEXT;
  var MIME_NOTE = PROTOCOL.MIME_NOTE;
  var MIME_TAGS = PROTOCOL.MIME_TAGS;
  var MIME_PASSWORD_HINT = PROTOCOL.MIME_PASSWORD_HINT;

  function s(bytes) { return bytes === undefined ? '' : str(bytes); }

  // Cut to at most `n` UTF-16 units without splitting a surrogate pair.
  function cut(text, n) {
    if (n === null || n === undefined || text.length <= n) return text;
    var c = text.charCodeAt(n - 1);
    if (c >= 0xD800 && c <= 0xDBFF) n -= 1;
    return text.substring(0, n);
  }

  function exists(name) { return tab().indexOf(name) !== -1; }

  function selected(req) {
    var all = tab();
    if (req.names) return req.names.filter(function (n) { return all.indexOf(n) !== -1; });
    return all.filter(function (n) {
      var has = req.prefix ? n.indexOf(req.prefix) === 0 : true;
      return req.invert ? !has : has;
    });
  }

  function item(data, preview) {
    var text = s(data[MIME_TEXT]);
    return {
      text: cut(text, preview),
      tags: s(data[MIME_TAGS]),
      note: cut(s(data[MIME_NOTE]), preview),
      secret: s(data[MIME_PASSWORD_HINT]) === 'secret',
      pinned: isPinned(data),
      content: content(function (mime) { return data[mime]; }, text === '', preview)
    };
  }

  // ---- what an item holds beside text, tags and note (src/backend/content.rs) ------------------
  // getItem() gives a ByteArray on CopyQ 6.4, itemsFormat() an ArrayBuffer (whose bytes
  // toBase64 would read as text): both as a ByteArray, where the engine has that class.
  function byteArray(b) {
    if (typeof b.left === 'function') return b;
    return typeof ByteArray === 'function' ? new ByteArray(b) : null;
  }

  function byteLength(b) {
    if (typeof b.byteLength === 'number') return b.byteLength;
    var a = byteArray(b);
    return a !== null && typeof a.length === 'number' ? a.length : str(b).length;
  }

  // The first CONTENT.HEAD_BYTES bytes of an image, for its pixel size; never the whole image.
  function head(mime, b) {
    if (mime.indexOf('image/') !== 0) return undefined;
    var a = byteArray(b);
    if (a === null || typeof a.left !== 'function') return undefined;
    return toBase64(a.left(CONTENT.HEAD_BYTES));
  }

  // How much of a rich source a listing reads (rich_units in src/backend/content.rs).
  function richUnits(mime, preview) {
    if (preview === null || preview === undefined || /\/rtf$/.test(mime)) return null;
    return Math.min(preview, CONTENT.RICH_PREVIEW_MOST) * CONTENT.RICH_UNITS_PER_PREVIEW;
  }

  // `get(mime)`: the bytes of that format, or undefined. Formats in CONTENT.MIMES order; the
  // source of a derived text for an item without plain text.
  function content(get, noText, preview) {
    var formats = [];
    var rich = null;
    CONTENT.MIMES.forEach(function (mime) {
      var b = get(mime);
      if (b === undefined || b === null) return;
      formats.push({ mime: mime, bytes: byteLength(b), head: head(mime, b) });
    });
    if (noText) {
      for (var i = 0; i < CONTENT.RICH.length && rich === null; ++i) {
        var mime = CONTENT.RICH[i];
        var b = get(mime);
        if (b !== undefined && b !== null) rich = { mime: mime, source: cut(str(b), richUnits(mime, preview)) };
      }
    }
    return { formats: formats, rich: rich };
  }

  // A window of rows read one getItem per row: cheap for pages.
  function pageRows(total, skip, limit, preview) {
    var items = [];
    var end = Math.min(total, skip + limit);
    for (var i = skip; i < end; ++i) items.push(item(getItem(i), preview));
    return items;
  }

  // Every row in three bulk calls: cheap for whole-tab scans (search). A selection holds CopyQ's
  // in-memory tab; if another client makes CopyQ unload it meanwhile, the selection comes back
  // short: then the rows are read one by one, which cannot be emptied that way.
  function allRows(name, preview) {
    var total = size();
    var sel = new ItemSelection(name).selectAll();
    var texts = sel.itemsFormat(MIME_TEXT);
    var tags = sel.itemsFormat(MIME_TAGS);
    var notes = sel.itemsFormat(MIME_NOTE);
    var hints = sel.itemsFormat(MIME_PASSWORD_HINT);
    var formats = {};
    var short = false;
    CONTENT.MIMES.forEach(function (mime) {
      formats[mime] = sel.itemsFormat(mime);
      short = short || formats[mime].length !== total;
    });
    if (short || texts.length !== total || tags.length !== total || notes.length !== total
        || hints.length !== total) {
      tab(name);
      return pageRows(size(), 0, size(), preview);
    }
    var items = [];
    for (var i = 0; i < texts.length; ++i) {
      var text = s(texts[i]);
      var row = function (mime) { return formats[mime][i]; };
      items.push({ text: cut(text, preview), tags: s(tags[i]), note: cut(s(notes[i]), preview),
                   secret: s(hints[i]) === 'secret', content: content(row, text === '', preview) });
    }
    return items;
  }

  function read(req) {
    // config() costs ~25 ms (CopyQ builds its configuration manager): only when asked.
    var maxItems = req.limits ? Number(config('maxitems')) : null;
    var names = selected(req);
    var tabs = [];
    for (var t = 0; t < names.length; ++t) {
      tab(names[t]);
      var total = size();
      var items = req.limit === null ? allRows(names[t], req.preview)
                                     : pageRows(total, req.skip, req.limit, req.preview);
      // A whole tab read again row by row (see allRows) has its length of now.
      tabs.push({ name: names[t], total: req.limit === null ? items.length : total, items: items });
    }
    return { tabs: tabs, max_items: maxItems, all_tabs: tab() };
  }

  // Rows of tabs, whole, by row number ({name, rows} each): a listing's previews that a mask made
  // unsure. A missing tab is left out (never created); a row past a tab's end is null.
  function rows(req) {
    var all = tab();
    var tabs = [];
    req.tabs.forEach(function (t) {
      if (all.indexOf(t.name) === -1) return;
      tab(t.name);
      var total = size();
      var items = t.rows.map(function (r) { return r < total ? item(getItem(r), null) : null; });
      tabs.push({ name: t.name, total: total, items: items });
    });
    return { tabs: tabs };
  }

  // One format of one row, whole (mcp_read item's image): base64, or null when not there.
  function format(req) {
    if (!exists(req.tab)) return { data: null };
    tab(req.tab);
    if (req.row >= size()) return { data: null };
    var b = getItem(req.row)[req.mime];
    if (b === undefined || b === null) return { data: null };
    var a = byteArray(b);
    return { data: toBase64(a !== null ? a : b) };
  }

  function ping() { return { tabs: tab().length, version: String(version()) }; }

  // ---- writes ----------------------------------------------------------------------------------
  // A refusal the gateway maps to a precise tool error; nothing has been changed when one is thrown.
  function Refusal(code, extra) { this.refusal = code; this.extra = extra || {}; }

  var SAVE_DELAYS = PROTOCOL.SAVE_DELAYS;

  // What this write has changed in CopyQ so far (null: nothing): 'copy' once a move's item is in
  // its target, 'change' once the write is made. Printed as a line of its own the moment it is
  // true, so that the gateway knows it even if this process dies before its reply (CopyQ gone).
  var made = null;
  function nowMade(what) {
    made = what;
    print('made:' + what + '\n');
  }
  // The save delays could not be put back after a failed body, whose error the reply keeps.
  var restoreError = null;

  // Save delays are owed (zeroed by a write that died before putting them back) from the line
  // `delays:[...]` until the line `delays:back`.
  // Calls made after the connection to CopyQ is lost do nothing and throw nothing: the last one
  // is read back to know they arrived.
  function putDelays(values) {
    SAVE_DELAYS.forEach(function (k, i) { config(k, values[i]); });
    var last = SAVE_DELAYS.length - 1;
    if (String(config(SAVE_DELAYS[last])) !== String(values[last])) {
      throw new Error('the save delays were not put back');
    }
    print('delays:back\n');
  }

  // The save delays as they were, all set to 0 now; printed first as `delays:[...]`, so that they
  // are put back whatever happens to this process, and put back here if setting them fails.
  function zeroDelays() {
    var old = SAVE_DELAYS.map(function (k) { return config(k); });
    print('delays:' + JSON.stringify(old) + '\n');
    try {
      SAVE_DELAYS.forEach(function (k) { config(k, 0); });
    } catch (e) {
      putDelays(old);
      throw e;
    }
    return old;
  }

  // CopyQ writes a tab to disk minutes after a change. Make `body`'s changes durable before the
  // reply: unload (= save now) every touched tab after the write. A tab CopyQ will not unload (open
  // in its window, or with an editor open) is "pinned": for those, the save delays are zeroed for
  // the duration of the write so the change itself schedules an immediate save.
  function durably(names, body) {
    // write protocol: unload
    var pinned = names.filter(function (n) { return exists(n) && unload(n).indexOf(n) === -1; });
    var old = null;
    if (pinned.length) {
      // write protocol: zero-delays
      old = zeroDelays();
    }
    var result;
    var failure = null;
    try {
      // write protocol: body (verify is each body's last part)
      result = body();
      nowMade('change');
    } catch (e) {
      failure = e;
    }
    // write protocol: restore-delays
    if (old) {
      try {
        putDelays(old);
      } catch (e) {
        // The body's error wins; this one is reported beside it.
        if (failure) restoreError = String(e); else failure = e;
      }
    }
    if (failure) throw failure;
    // write protocol: unload-after
    var opened = names.filter(function (n) { return exists(n) && unload(n).indexOf(n) === -1; });
    if (opened.length && !pinned.length) {
      // write protocol: save-opened
      // Opened in CopyQ's window since the first unload, a tab stayed loaded, its change only in
      // memory until its save delay: CopyQ reloads (so saves) every loaded tab when an option
      // changes, so the save delays are set to 0 and put back.
      putDelays(zeroDelays());
    }
    // A tab the write created by writing into it is not flushed to CopyQ's tab list (write
    // protocol step 9): its data file, just written, brings it back after a crash.
    result.persisted = pinned.length || opened.length ? 'save_delay' : 'unload';
    return result;
  }

  // CopyQ saves its tab list a second after a tab is created or removed; any config() call saves
  // a pending one at once, so a removed tab stays removed after a crash right after the reply.
  function flushTabList() {
    // write protocol: flush-tab-list
    config('tabs');
  }

  function mimeItem(it) {
    var m = {};
    m[MIME_TEXT] = it.text;
    if (it.tags.length) m[MIME_TAGS] = it.tags.join(',');
    if (it.note) m[MIME_NOTE] = it.note;
    return m;
  }

  // An item's every format from [[mime, base64], ...] (a restore of a deleted screenshot).
  function wholeItem(whole) {
    var m = {};
    whole.forEach(function (f) { m[f[0]] = fromBase64(f[1]); });
    return m;
  }

  function sameAs(data, it) {
    return s(data[MIME_TEXT]) === it.text && s(data[MIME_TAGS]) === it.tags.join(',')
        && s(data[MIME_NOTE]) === it.note;
  }

  // A row the owner pinned (CopyQ's pinned-items plugin): CopyQ keeps it where it is and refuses
  // to remove it.
  function isPinned(data) { return data[PROTOCOL.MIME_PINNED] !== undefined; }

  // The row of the current tab an item just written at row 0 is at, -1 if it is not there: row 0,
  // or the first below the rows pinned at the top, where CopyQ moved it to keep them in place.
  function landedAt(it) {
    var count = size();
    for (var r = 0; r < count; ++r) {
      var data = getItem(r);
      if (!isPinned(data)) return sameAs(data, it) ? r : -1;
    }
    return -1;
  }

  // `checkRow` of a row about to be removed: refused up front if it is pinned.
  function checkUnpinned(name, row, expect) {
    var data = checkRow(name, row, expect);
    if (isPinned(data)) throw new Refusal('pinned');
    return data;
  }

  // Select `name` and check `row` still holds `expect`. (write protocol: check)
  function checkRow(name, row, expect) {
    if (!exists(name)) throw new Refusal('no_tab');
    tab(name);
    var count = size();
    if (row >= count) throw new Refusal('no_row', { count: count });
    var data = getItem(row);
    if (!sameAs(data, expect)) throw new Refusal('conflict');
    return data;
  }

  // Refuse rather than let CopyQ silently evict the oldest item of a full tab. `limit` is the
  // maxitems the gateway read when it planned the write.
  function checkRoom(name, limit) {
    if (exists(name)) {
      tab(name);
      if (size() >= limit) throw new Refusal('tab_full', { limit: limit });
    }
  }

  // CopyQ took another tab for `name` (one whose name differs only by '&'): the write was made
  // there. Unlike a Refusal, something has changed.
  function checkLanded(name) {
    if (!exists(name)) throw new Refusal('misdirected', { tab: name });
  }

  function insertItem(req) {
    checkRoom(req.tab, req.limit);
    return durably([req.tab], function () {
      tab(req.tab);
      var before = size();
      write(0, req.whole ? wholeItem(req.whole) : mimeItem(req.item));
      // write protocol: verify
      checkLanded(req.tab);
      var at = landedAt(req.item);
      if (size() !== before + 1 || at < 0) throw new Error('insert was not applied');
      return { count: size(), row: at };
    });
  }

  function changeItem(req) {
    checkRow(req.tab, req.row, req.expect);
    return durably([req.tab], function () {
      tab(req.tab);
      var it = req.item;
      change(req.row, MIME_TEXT, it.text,
             MIME_TAGS, it.tags.length ? it.tags.join(',') : undefined,
             MIME_NOTE, it.note ? it.note : undefined);
      if (!alive() || !sameAs(getItem(req.row), it)) throw new Error('change was not applied');
      return {};
    });
  }

  // After a lost connection, CopyQ 17.0's client does nothing and says nothing, answering every
  // call with nothing: CopyQ always has a tab, so an empty tab list means it is gone.
  function alive() { return tab().length > 0; }

  // Remove `row` of the current tab, which holds `count` rows, and see that it went. From CopyQ
  // 8.0 an onItemsRemoved() script may refuse a removal, and remove() then says nothing.
  function removeRow(row, count, what) {
    remove(row);
    var now = alive() ? size() : null;
    if (now === count) throw new Refusal('kept');
    if (now !== count - 1) throw new Error(what + ' was not applied');
  }

  function removeItem(req) {
    checkUnpinned(req.tab, req.row, req.expect);
    return durably([req.tab], function () {
      tab(req.tab);
      removeRow(req.row, size(), 'remove');
      return { count: size() };
    });
  }

  // Every format of a row that still holds `expect`, as [[mime, base64], ...]: what a delete's
  // audit entry keeps. Changes nothing.
  function whole(req) {
    var data = checkRow(req.tab, req.row, req.expect);
    var formats = [];
    for (var mime in data) {
      var a = byteArray(data[mime]);
      formats.push([mime, toBase64(a !== null ? a : data[mime])]);
    }
    return { whole: formats };
  }

  // Target first, checked, then the source: whatever fails, the item is in at least one tab.
  function moveItem(req) {
    var data = checkUnpinned(req.from, req.row, req.expect);
    checkRoom(req.to, req.limit);
    return durably([req.to, req.from], function () {
      tab(req.to);
      var before = size();
      write(0, data);
      checkLanded(req.to);
      var at = landedAt(req.expect);
      if (size() !== before + 1 || at < 0) throw new Error('copy to target was not applied');
      nowMade('copy');
      unload(req.to);
      checkRow(req.from, req.row, req.expect);
      removeRow(req.row, size(), 'remove from source');
      return { row: at };
    });
  }

  function createTab(req) {
    if (exists(req.tab)) return { status: 'already_exists' };
    var result = durably([req.tab], function () {
      tab(req.tab);
      size();
      // Touching a tab creates it up to CopyQ 16; 17.0 creates one only for an added item (and
      // drops touched tabs from its configuration): add an empty item and remove it.
      if (!exists(req.tab)) {
        add('');
        remove(0);
      }
      checkLanded(req.tab);
      return { status: 'created' };
    });
    // The tab is the whole write: CopyQ's tab list names it on disk before the reply.
    flushTabList();
    return result;
  }

  function removeTabs(req) {
    var removed = 0;
    req.tabs.forEach(function (n) {
      if (!exists(n)) return;
      tab(n);
      removed += size();
      removeTab(n);
      if (!alive() || exists(n)) throw new Error('removeTab was not applied');
      if (!made) nowMade('change');
    });
    flushTabList();
    return { items_removed: removed };
  }

  var ops = { read: read, rows: rows, format: format, ping: ping, insert: insertItem, change: changeItem,
              remove: removeItem, move: moveItem, whole: whole, create_tab: createTab, remove_tabs: removeTabs };

  var reply;
  try {
    var req = JSON.parse(str(input()));
    if (req.owed_delays) putDelays(req.owed_delays);
    var op = ops[req.op];
    if (!op) throw new Error('unknown op ' + req.op);
    reply = op(req);
    reply.ok = true;
  } catch (e) {
    reply = e instanceof Refusal ? { ok: false, refusal: e.refusal, extra: e.extra }
                                 : { ok: false, error: String(e) };
    if (made) reply.made = made;
    if (restoreError) reply.restore_error = restoreError;
  }
  print(JSON.stringify(reply));
})();
