// Bundled with copyq-mcp and run as `copyq eval -- <this script>`.
// The request is JSON on stdin; the reply is one JSON object on stdout:
// {"ok":true,...} or {"ok":false,"error":"..."}. User data never enters the script text.
// All work for one tool call happens here, so each call costs one process.
(function () {
  var MIME_TEXT = 'text/plain';
  var MIME_NOTE = 'application/x-copyq-item-notes';
  var MIME_TAGS = 'application/x-copyq-tags';

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
    return {
      text: cut(s(data[MIME_TEXT]), preview),
      tags: s(data[MIME_TAGS]),
      note: cut(s(data[MIME_NOTE]), preview)
    };
  }

  // A window of rows read one getItem per row: cheap for pages.
  function pageRows(total, skip, limit, preview) {
    var items = [];
    var end = Math.min(total, skip + limit);
    for (var i = skip; i < end; ++i) items.push(item(getItem(i), preview));
    return items;
  }

  // Every row in three bulk calls: cheap for whole-tab scans (search).
  function allRows(name, preview) {
    var sel = new ItemSelection(name).selectAll();
    var texts = sel.itemsFormat(MIME_TEXT);
    var tags = sel.itemsFormat(MIME_TAGS);
    var notes = sel.itemsFormat(MIME_NOTE);
    var items = [];
    for (var i = 0; i < texts.length; ++i) {
      items.push({ text: cut(s(texts[i]), preview), tags: s(tags[i]), note: cut(s(notes[i]), preview) });
    }
    return items;
  }

  function read(req) {
    var names = selected(req);
    var tabs = [];
    for (var t = 0; t < names.length; ++t) {
      tab(names[t]);
      var total = size();
      var items = req.limit === null ? allRows(names[t], req.preview)
                                     : pageRows(total, req.skip, req.limit, req.preview);
      tabs.push({ name: names[t], total: total, items: items });
    }
    return { tabs: tabs };
  }

  function ping() { return { tabs: tab().length }; }

  var ops = { read: read, ping: ping };

  var reply;
  try {
    var req = JSON.parse(str(input()));
    var op = ops[req.op];
    if (!op) throw new Error('unknown op ' + req.op);
    reply = op(req);
    reply.ok = true;
  } catch (e) {
    reply = { ok: false, error: String(e) };
  }
  print(JSON.stringify(reply));
})();
