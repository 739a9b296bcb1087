/* wikigym episode viewer: a static page, no network, no server (opens from file://).
 *
 * The list of episodes is loaded at once (data/list.js); each episode's transcript comes in a
 * chunk of episodes (data/ep-NNNNN.js) loaded on demand by a <script> tag, so a run of 10,000
 * episodes opens as fast as one of 10. Every string from the report is put into the page as
 * text (textContent), never as markup: a report from elsewhere is data, not code.
 *
 * The URL hash keeps the view: #e=12 opens episode 12, #e=12&p=5527 also shows passage 5527,
 * #level=easy&outcome=unsolved&mask=yes&err=not_found&hal=citation_unseen&page=2 filter the list.
 * In a comparison, #t=TASK opens that task's two episodes side by side.
 */
(function () {
  "use strict";

  var W = (window.wikigymView = window.wikigymView || {});
  var state = { meta: null, rows: [], chunks: {}, waiting: {}, passages: {}, page: 0 };
  var PAGE = 100;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") node.textContent = attrs[k];
        else if (k === "cls") node.className = attrs[k];
        else if (k === "on") Object.keys(attrs.on).forEach(function (e) { node.addEventListener(e, attrs.on[e]); });
        else node.setAttribute(k, attrs[k]);
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function $(id) { return document.getElementById(id); }
  function fmt(x, d) { return typeof x === "number" ? x.toFixed(d === undefined ? 3 : d) : String(x); }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }

  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      if (!kv) return;
      var i = kv.indexOf("=");
      var k = decodeURIComponent(i < 0 ? kv : kv.slice(0, i));
      out[k] = i < 0 ? "" : decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }

  function setHash(params) {
    var parts = [];
    Object.keys(params).forEach(function (k) {
      if (params[k] !== "" && params[k] !== undefined && params[k] !== null)
        parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(params[k]));
    });
    var next = "#" + parts.join("&");
    if (location.hash !== next) location.hash = next;
    else render();
  }

  function update(changes) {
    var p = hashParams();
    Object.keys(changes).forEach(function (k) { p[k] = changes[k]; });
    setHash(p);
  }

  /* ---------------------------------------------------------------- data loading */

  W.list = function (data) {
    state.meta = data.meta;
    state.rows = data.rows;
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  };

  W.chunk = function (key, data) {
    state.chunks[key] = data.episodes;
    Object.keys(data.passages).forEach(function (pid) { state.passages[pid] = data.passages[pid]; });
    (state.waiting[key] || []).forEach(function (fn) { fn(); });
    delete state.waiting[key];
  };

  function withChunk(key, fn) {
    if (state.chunks[key]) return fn();
    if (state.waiting[key]) return state.waiting[key].push(fn);
    state.waiting[key] = [fn];
    var s = document.createElement("script");
    s.src = state.meta.data + "/" + key + ".js";
    s.onerror = function () {
      var view = $("detail");
      clear(view).appendChild(el("p", { cls: "problem", text: "could not load " + s.src }));
    };
    document.body.appendChild(s);
  }

  /* ---------------------------------------------------------------- the list */

  function matches(row, p) {
    if (p.level && row.lv !== p.level) return false;
    if (p.outcome === "solved" && !row.ok) return false;
    if (p.outcome === "unsolved" && row.ok) return false;
    if (p.mask === "yes" && !row.tr) return false;
    if (p.mask === "no" && row.tr) return false;
    if (p.err === "any" && Object.keys(row.te).length === 0) return false;
    if (p.err === "none" && Object.keys(row.te).length > 0) return false;
    if (p.err && p.err !== "any" && p.err !== "none" && !row.te[p.err]) return false;
    if (p.hal === "any" && Object.keys(row.h).length === 0) return false;
    if (p.hal && p.hal !== "any" && !row.h[p.hal]) return false;
    if (p.q) {
      var q = p.q.toLowerCase();
      var hay = (row.id + " " + (row.a || "") + " " + row.g).toLowerCase();
      if (hay.indexOf(q) < 0) return false;
    }
    return true;
  }

  function options(select, values, current) {
    values.forEach(function (v) {
      var o = el("option", { value: v[0], text: v[1] });
      if (v[0] === current) o.selected = true;
      select.appendChild(o);
    });
    return select;
  }

  function filterBar(p) {
    var m = state.meta;
    var bar = clear($("filters"));
    function sel(name, label, values) {
      var s = el("select", { id: "f-" + name, on: { change: function () { var c = {}; c[name] = this.value; c.page = ""; update(c); } } });
      options(s, [["", "all"]].concat(values), p[name] || "");
      bar.appendChild(el("label", {}, [label + " ", s]));
    }
    sel("level", "level", m.levels.map(function (l) { return [l, l]; }));
    sel("outcome", "outcome", [["solved", "solved"], ["unsolved", "unsolved"]]);
    sel("mask", "masked", [["yes", "masked (truncated)"], ["no", "not masked"]]);
    sel("err", "tool errors", [["any", "any"], ["none", "none"]].concat(m.tool_error_codes.map(function (c) { return [c, c]; })));
    sel("hal", "hallucination", [["any", "any"]].concat(m.hallucination_types.map(function (c) { return [c, c]; })));
    var box = el("input", { id: "f-q", type: "search", placeholder: "task id or answer", value: p.q || "" });
    box.addEventListener("change", function () { update({ q: this.value, page: "" }); });
    bar.appendChild(el("label", {}, ["find ", box]));
  }

  function renderList(p) {
    var shown = state.rows.filter(function (r) { return matches(r, p); });
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    var page = Math.min(pages - 1, Math.max(0, parseInt(p.page || "0", 10) || 0));
    var table = el("table", { id: "episodes", cls: "list" });
    table.appendChild(el("tr", {}, ["#", "task", "level", "outcome", "F1", "reward", "steps", "mask", "tool errors", "hallucinations", "answer", "gold"].map(function (h) { return el("th", { text: h }); })));
    shown.slice(page * PAGE, page * PAGE + PAGE).forEach(function (r) {
      var tr = el("tr", { cls: "row " + (r.ok ? "ok" : "fail") + (String(r.i) === p.e ? " current" : ""), "data-episode": String(r.i) }, [
        el("td", { text: String(r.i) }),
        el("td", { cls: "mono", text: r.id }),
        el("td", { text: r.lv }),
        el("td", { cls: "outcome", text: r.ok ? "solved" : "unsolved" }),
        el("td", { text: fmt(r.f1, 2) }),
        el("td", { text: fmt(r.r, 2) }),
        el("td", { text: String(r.n) }),
        el("td", { text: r.tr ? "masked" : "" }),
        el("td", { text: Object.keys(r.te).map(function (k) { return k + "×" + r.te[k]; }).join(" ") }),
        el("td", { text: Object.keys(r.h).map(function (k) { return k + "×" + r.h[k]; }).join(" ") }),
        el("td", { text: r.a === null ? "(no answer)" : r.a }),
        el("td", { text: r.g })
      ]);
      tr.addEventListener("click", function () { update({ e: String(r.i), p: "" }); });
      table.appendChild(tr);
    });
    var nav = el("div", { cls: "pager" }, [
      el("button", { text: "‹ previous", on: { click: function () { update({ page: String(page - 1) }); } } }),
      el("span", { id: "count", text: " " + shown.length + " of " + state.rows.length + " episodes, page " + (page + 1) + " of " + pages + " " }),
      el("button", { text: "next ›", on: { click: function () { update({ page: String(page + 1) }); } } })
    ]);
    nav.firstChild.disabled = page === 0;
    nav.lastChild.disabled = page >= pages - 1;
    clear($("list")).appendChild(nav);
    $("list").appendChild(table);
  }

  /* ---------------------------------------------------------------- one episode */

  function passageView(pid) {
    var box = el("div", { cls: "passage", id: "passage-" + pid });
    var info = state.passages[pid];
    if (!info) {
      box.appendChild(el("p", { cls: "muted", text: "p" + pid + ": text not in this report's snapshot (or not opened)" }));
      return box;
    }
    box.appendChild(el("div", { cls: "ptitle" }, [el("b", { text: "p" + pid }), " " + info.title + (info.section ? " — " + info.section : "") + " (doc " + info.doc_id + ")"]));
    box.appendChild(el("div", { cls: "ptext", text: info.text }));
    return box;
  }

  /* Text with each passage id made a link that shows the passage; cited ones marked. */
  function withPassages(text, cited, onOpen) {
    var out = el("pre", { cls: "obs" });
    var re = /(^|[^\w-])p(\d{1,12})(?![\w-])/g;
    var last = 0, m;
    while ((m = re.exec(text)) !== null) {
      var start = m.index + m[1].length;
      out.appendChild(document.createTextNode(text.slice(last, start)));
      var pid = m[2];
      var link = el("a", { href: "javascript:void 0", cls: "pid" + (cited[pid] ? " cited" : ""), "data-passage": pid, text: "p" + pid });
      (function (pid, link) { link.addEventListener("click", function () { onOpen(pid, link); }); })(pid, link);
      out.appendChild(link);
      last = start + 1 + pid.length;
    }
    out.appendChild(document.createTextNode(text.slice(last)));
    return out;
  }

  function kv(obj) {
    var t = el("table", { cls: "kv" });
    Object.keys(obj).forEach(function (k) { t.appendChild(el("tr", {}, [el("th", { text: k }), el("td", { text: fmt(obj[k]) })])); });
    return t;
  }

  function tree(value) {
    if (value === null || typeof value !== "object") return el("span", { cls: "leaf", text: JSON.stringify(value) });
    var ul = el("ul", { cls: "tree" });
    Object.keys(value).forEach(function (k) {
      var v = value[k];
      var li = el("li", {}, [el("span", { cls: "key", text: Array.isArray(value) ? "[" + k + "]" : k }), ": "]);
      li.appendChild(tree(v));
      ul.appendChild(li);
    });
    return ul;
  }

  function callText(c) { return c.name + "(" + JSON.stringify(c.args) + ")"; }

  function episodeView(row, ep, highlightStep, openPassage) {
    var cited = {};
    (ep.citations || []).forEach(function (c) { var m = /^p(\d+)$/.exec(c); if (m) cited[m[1]] = true; });
    var box = el("div", { cls: "episode", "data-episode": String(row.i) });
    box.appendChild(el("h2", { text: "Episode " + row.i + ": " + row.id }));
    box.appendChild(el("p", { cls: "question" }, [el("b", { text: "Question: " }), ep.question || "(not recorded)"]));
    if (ep.problem) box.appendChild(el("p", { cls: "problem", text: ep.problem }));
    var golds = ep.task ? [ep.task.answer].concat(ep.task.aliases) : ep.golds || [];
    var verdict = el("div", { cls: "verdict " + (row.ok ? "ok" : "fail") }, [
      el("div", {}, [el("b", { text: "Answer: " }), el("span", { cls: "answer", text: ep.answer === null || ep.answer === undefined ? "(no answer)" : ep.answer })]),
      el("div", {}, [el("b", { text: "Gold: " }), el("span", { cls: "gold", text: golds.join("  |  ") })]),
      el("div", { text: (row.ok ? "solved" : "unsolved") + ", F1 " + fmt(row.f1, 2) + ", reward " + fmt(row.r, 3) + ", " + row.n + " steps" + (ep.mask ? ", MASKED (left out of the loss)" : "") }),
      el("div", {}, [el("b", { text: "Citations: " }), (ep.citations || []).length ? ep.citations.join(", ") : "none"])
    ]);
    box.appendChild(verdict);
    box.appendChild(el("div", { cls: "passages", id: "passages-" + row.i }));
    if (ep.components && Object.keys(ep.components).length) {
      box.appendChild(el("h3", { text: "Reward components" }));
      box.appendChild(kv(ep.components));
    }
    box.appendChild(el("h3", { text: "Transcript" }));
    var first = el("details", { cls: "step" }, [el("summary", { text: "first observation (instructions, tools, question)" }), el("pre", { cls: "obs", text: ep.first_observation || "" })]);
    box.appendChild(first);
    (ep.steps || []).forEach(function (s, k) {
      var n = k + 1;
      var st = el("div", { cls: "step" + (n === highlightStep ? " differs" : "") + (s.tool_error ? " error" : ""), id: "step-" + row.i + "-" + n, "data-step": String(n) });
      st.appendChild(el("div", { cls: "stephead", text: "step " + n + (s.tool_error ? " [" + s.tool_error + "]" : "") + (n === highlightStep ? " ← first difference" : "") }));
      s.calls.forEach(function (c) { st.appendChild(el("div", { cls: "call mono", text: "→ " + callText(c) })); });
      s.errors.forEach(function (e) { st.appendChild(el("div", { cls: "callerror", text: "✗ " + e.code + ": " + e.message })); });
      st.appendChild(el("details", { cls: "raw" }, [el("summary", { text: "model text" }), el("pre", { cls: "action", text: s.action })]));
      st.appendChild(withPassages(s.observation, cited, openPassage));
      box.appendChild(st);
    });
    if (ep.task) {
      var t = ep.task;
      var proof = el("details", { cls: "proof", open: "open" }, [el("summary", { text: "Task proof" })]);
      proof.appendChild(el("p", { text: "level " + (t.level || "?") + (t.answer_type ? ", answer type " + t.answer_type : "") + (t.generator ? ", generator " + t.generator : "") }));
      if (t.query) { proof.appendChild(el("h4", { text: "Formal query" })); proof.appendChild(tree(t.query)); }
      proof.appendChild(el("h4", { text: "Evidence passages" }));
      var ev = el("div", { cls: "evidence" });
      (t.evidence.passage_ids || []).forEach(function (pid) { ev.appendChild(passageView(String(pid))); });
      if (!(t.evidence.passage_ids || []).length) ev.appendChild(el("p", { cls: "muted", text: "none recorded" }));
      proof.appendChild(ev);
      if ((t.evidence.facts || []).length) {
        proof.appendChild(el("h4", { text: "Evidence facts" }));
        var facts = el("ul");
        t.evidence.facts.forEach(function (f) { facts.appendChild(el("li", { text: (f.subject || "doc " + f.subject_doc_id) + " — " + f.relation + " → " + f.object + (f.passage_id !== null && f.passage_id !== undefined ? " (p" + f.passage_id + ")" : "") })); });
        proof.appendChild(facts);
      }
      proof.appendChild(el("h4", { text: "Oracle path" }));
      var ol = el("ol", { cls: "oracle" });
      (t.oracle || []).forEach(function (c) { ol.appendChild(el("li", { cls: "mono", text: callText(c) })); });
      if (!(t.oracle || []).length) ol.appendChild(el("li", { cls: "muted", text: "no oracle (evidence not resolved)" }));
      proof.appendChild(ol);
      box.appendChild(proof);
    }
    return box;
  }

  /* A click on a passage id shows (or hides) the passage under the text it was in. */
  function togglePassage(pid, link) {
    var pre = link.closest("pre");
    var next = pre.nextSibling;
    if (next && next.getAttribute && next.getAttribute("data-inline") === pid) { next.remove(); return; }
    var box = passageView(pid);
    box.setAttribute("data-inline", pid);
    box.removeAttribute("id");
    pre.parentNode.insertBefore(box, pre.nextSibling);
  }

  function showPassage(row, pid) {
    var panel = $("passages-" + row.i);
    if (!panel) return;
    var existing = $("passage-" + pid);
    if (existing && panel.contains(existing)) return;
    panel.insertBefore(passageView(pid), panel.firstChild);
  }

  function renderEpisode(p) {
    var view = clear($("detail"));
    if (!p.e) { view.appendChild(el("p", { cls: "muted", text: "Click an episode to read it." })); return; }
    var row = state.rows[parseInt(p.e, 10)];
    if (!row) { view.appendChild(el("p", { cls: "problem", text: "no episode " + p.e })); return; }
    view.appendChild(el("p", { cls: "muted", text: "loading episode " + row.i + " …" }));
    withChunk(state.meta.chunk_prefix + pad(row.c), function () {
      var ep = state.chunks[state.meta.chunk_prefix + pad(row.c)][row.i];
      clear(view).appendChild(episodeView(row, ep, 0, togglePassage));
      if (p.p) showPassage(row, p.p);
    });
  }

  function pad(n) { var s = String(n); while (s.length < 5) s = "0" + s; return s; }

  /* ---------------------------------------------------------------- summary */

  function renderSummary() {
    var m = state.meta;
    var head = clear($("summary"));
    head.appendChild(el("h1", { text: m.title }));
    head.appendChild(el("p", { cls: "muted", text: m.subtitle }));
    if (m.levels_table) {
      var t = el("table", { cls: "kv levels" });
      t.appendChild(el("tr", {}, m.levels_table.header.map(function (h) { return el("th", { text: h }); })));
      m.levels_table.rows.forEach(function (r) { t.appendChild(el("tr", {}, r.map(function (c) { return el("td", { text: String(c) }); }))); });
      head.appendChild(t);
    }
    (m.notes || []).forEach(function (n) { head.appendChild(el("p", { cls: "note", text: n })); });
  }

  /* ---------------------------------------------------------------- comparison */

  function renderCompare(p) {
    var m = state.meta;
    var list = clear($("list"));
    var only = p.change || "changed";
    var bar = clear($("filters"));
    var s = el("select", { id: "f-change", on: { change: function () { update({ change: this.value, t: "" }); } } });
    options(s, [["changed", "outcome changed"], ["fixed", "fixed (B solves, A did not)"], ["broken", "broken (A solved, B does not)"], ["same", "same outcome"], ["all", "all tasks"]], only);
    bar.appendChild(el("label", {}, ["show ", s]));
    var rows = state.rows.filter(function (r) {
      if (only === "all") return true;
      if (only === "same") return r.change === "same";
      if (only === "changed") return r.change !== "same";
      return r.change === only;
    });
    var table = el("table", { id: "tasks", cls: "list" });
    table.appendChild(el("tr", {}, ["task", "level", m.names[0], m.names[1], "change", "first differing step"].map(function (h) { return el("th", { text: h }); })));
    rows.forEach(function (r) {
      var tr = el("tr", { cls: "row " + r.change + (r.id === p.t ? " current" : ""), "data-task": r.id }, [
        el("td", { cls: "mono", text: r.id }),
        el("td", { text: r.lv }),
        el("td", { cls: r.a.ok ? "ok" : "fail", text: r.a.ok ? "solved" : "unsolved" }),
        el("td", { cls: r.b.ok ? "ok" : "fail", text: r.b.ok ? "solved" : "unsolved" }),
        el("td", { cls: "change", text: r.change }),
        el("td", { text: r.diff === null ? "identical" : "step " + r.diff })
      ]);
      tr.addEventListener("click", function () { update({ t: r.id }); });
      table.appendChild(tr);
    });
    list.appendChild(el("p", { id: "count", text: rows.length + " of " + state.rows.length + " tasks" }));
    list.appendChild(table);
    var view = clear($("detail"));
    if (!p.t) { view.appendChild(el("p", { cls: "muted", text: "Click a task to see its two episodes side by side." })); return; }
    var row = state.rows.filter(function (r) { return r.id === p.t; })[0];
    if (!row) { view.appendChild(el("p", { cls: "problem", text: "no task " + p.t })); return; }
    var side = el("div", { cls: "sides" });
    view.appendChild(side);
    ["a", "b"].forEach(function (k, n) {
      var col = el("div", { cls: "side", id: "side-" + k }, [el("h2", { text: m.names[n] })]);
      side.appendChild(col);
      var key = k + "/" + m.chunk_prefix + pad(row[k].c);
      withChunk(key, function () {
        var ep = state.chunks[key][row[k].i];
        var r = { i: row[k].i, id: row.id, ok: row[k].ok, f1: row[k].f1, r: row[k].r, n: row[k].n };
        col.appendChild(episodeView(r, ep, row.diff === null ? 0 : row.diff, togglePassage));
        var d = $("step-" + r.i + "-" + row.diff);
        if (d && row.diff > 1) col.scrollTop = Math.max(0, d.offsetTop - col.offsetTop - 40);  // this pane only
      });
    });
  }

  /* ---------------------------------------------------------------- main */

  function render() {
    var p = hashParams();
    if (state.meta.mode === "compare") return renderCompare(p);
    filterBar(p);
    renderList(p);
    renderEpisode(p);
  }

  function start() {
    renderSummary();
    window.addEventListener("hashchange", render);
    render();
    document.body.setAttribute("data-ready", "1");
  }
})();
