"""The item view's script (items_page.py puts it in the page): plain JavaScript, no library. It reads
the rows embedded in #items-data, or fetches them from the service's /items when the payload
says `served`, and builds the filters, the list, the item's detail and the same item in the other
runs from text nodes only (textContent, never innerHTML: item text is untrusted). Its filter is
items_filter.py's `ItemQuery.matches` (a value per facet among those chosen, every facet chosen,
and the disagree yes/no); the filter state lives in the page's #fragment, so a link reopens it.
"""

SCRIPT = r"""
(function () {
  "use strict";
  const FACETS = ["run", "method", "relation", "bucket", "strategy", "setting", "outcome"];
  const PAGE = 100;
  const data = JSON.parse(document.getElementById("items-data").textContent);
  const served = data.served || null;
  const all = data.rows || [];
  const runs = {};
  let query = fromHash(), page = Number(new URLSearchParams(location.hash.slice(1)).get("page") || 0) || 0;
  let current = null, filled = false, asked = 0;

  function $(id) { return document.getElementById(id); }
  function el(tag, text, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function cell(row, text, cls) { const td = el("td", text); if (cls) td.className = cls; row.appendChild(td); return td; }
  function shown(x) {
    if (x === null || x === undefined) return "–";
    if (typeof x === "number") return Number.isInteger(x) ? String(x) : String(Number(x.toFixed(6)));
    return String(x);
  }
  function status(text) { $("items-status").textContent = text; }

  function fromHash() {
    const given = new URLSearchParams(location.hash.slice(1)), q = {};
    for (const f of FACETS) q[f] = given.get(f) ? [given.get(f)] : [];
    const d = given.get("disagree");
    q.disagree = d === "true" ? true : d === "false" ? false : null;
    return q;
  }
  function fromForm() {
    const q = {};
    for (const f of FACETS) { const v = $("filter-" + f).value; q[f] = v ? [v] : []; }
    const d = $("filter-disagree").value;
    q.disagree = d === "" ? null : d === "true";
    return q;
  }
  function toForm(q) {
    for (const f of FACETS) { const s = $("filter-" + f); s.value = q[f][0] || ""; if (s.value !== (q[f][0] || "")) s.value = ""; }
    $("filter-disagree").value = q.disagree === null ? "" : String(q.disagree);
  }
  function writeHash() {
    const p = new URLSearchParams();
    for (const f of FACETS) if (query[f].length) p.set(f, query[f][0]);
    if (query.disagree !== null) p.set("disagree", String(query.disagree));
    if (page) p.set("page", String(page));
    if (current) { p.set("item-run", current.run); p.set("item-id", current.id); p.set("item-key", current.key); }
    try { history.replaceState(null, "", "#" + p.toString()); } catch (e) { /* a page that may not rewrite its address */ }
  }
  // items_filter.py ItemQuery.matches: every facet given holds one of its values; disagree agrees
  function matches(row, q) {
    for (const f of FACETS) if (q[f].length && q[f].indexOf(row[f]) < 0) return false;
    return q.disagree === null || Boolean(row.disagree) === q.disagree;
  }

  function setRuns(list) {
    const body = document.querySelector("#runs-legend tbody");
    clear(body);
    for (const run of list || []) {
      runs[run.run] = run;
      const tr = el("tr", null, {"data-run": run.run});
      cell(tr, run.run); cell(tr, run.name); cell(tr, run.model); cell(tr, run.folder);
      cell(tr, run.probe_set || run.probe_note || ("not found (" + run.probes + "): prompts and choices are what items.jsonl holds"));
      body.appendChild(tr);
    }
    $("runs-count").textContent = String(body.children.length);
  }
  function fill(facets) {
    for (const f of FACETS) {
      const select = $("filter-" + f);
      while (select.options.length > 1) select.remove(1);
      for (const value of facets[f] || []) {
        const option = el("option", f === "run" && runs[value] ? runs[value].label : value);
        option.value = value;
        select.appendChild(option);
      }
    }
    toForm(query);
    filled = true;
  }

  function update() {
    if (served) { fetchPage(); return; }
    const kept = all.filter(function (row) { return matches(row, query); });
    if (page * PAGE >= kept.length) page = 0;
    list(kept.slice(page * PAGE, (page + 1) * PAGE), kept.length, all.length);
  }
  function list(rows, count, of) {
    const body = $("item-rows");
    clear(body);
    for (const row of rows) {
      const tr = el("tr", null, {"data-testid": "item-row", "data-run": row.run, "data-id": row.id, "data-key": row.key,
                                 "data-outcome": row.outcome, "tabindex": "0"});
      cell(tr, row.run); cell(tr, row.method);
      cell(tr, row.relation_label && row.relation_label !== row.relation ? row.relation + " " + row.relation_label : row.relation);
      cell(tr, row.bucket); cell(tr, row.strategy || row.setting || ""); cell(tr, row.subject);
      cell(tr, row.pick); cell(tr, row.gold); cell(tr, row.outcome, row.outcome);
      if (current && current.run === row.run && current.key === row.key) tr.setAttribute("aria-selected", "true");
      tr.addEventListener("click", function () { open(row); });
      tr.addEventListener("keydown", function (event) { if (event.key === "Enter") open(row); });
      body.appendChild(tr);
    }
    $("item-count").textContent = count + " row(s) match" + (of === null ? "" : " of " + of);
    const pages = Math.max(1, Math.ceil(count / PAGE));
    $("page-info").textContent = "page " + (page + 1) + " of " + pages;
    $("page-prev").disabled = page <= 0;
    $("page-next").disabled = page + 1 >= pages;
    writeHash();
    document.body.setAttribute("data-ready", "true");
  }
  function params(extra) {
    const p = new URLSearchParams();
    for (const f of FACETS) for (const v of query[f]) p.append(f, v);
    if (query.disagree !== null) p.set("disagree", String(query.disagree));
    for (const [k, v] of Object.entries(extra || {})) p.set(k, String(v));
    return p;
  }
  function get(url) {
    return fetch(url).then(function (answer) {
      if (!answer.ok) throw new Error(answer.status + " " + answer.statusText);
      return answer.json();
    });
  }
  function fetchPage() {
    const mine = ++asked;
    status("loading…");
    get(served.endpoint + "?" + params({offset: page * PAGE, limit: PAGE}).toString()).then(function (answer) {
      if (mine !== asked) return;
      setRuns(answer.runs);
      if (!filled) fill(answer.facets);
      list(answer.rows, answer.total, null);
      status(answer.runs.length ? "" : "no runs yet: start `factprobe serve` with --runs DIR, or run an eval job");
    }).catch(function (error) { status("could not load the items: " + error.message); });
  }

  function open(row) {
    current = row;
    $("item-detail").hidden = false;
    for (const tr of document.querySelectorAll("#item-rows tr")) {
      if (tr.dataset.run === row.run && tr.dataset.key === row.key) tr.setAttribute("aria-selected", "true");
      else tr.removeAttribute("aria-selected");
    }
    $("detail-title").textContent = row.run + " · " + row.method + " · " + row.subject + " → " + (row.gold || "?");
    const facts = $("detail-facts");
    clear(facts);
    const run = runs[row.run] || {};
    for (const [name, value] of [["Item", row.id], ["Run", run.label || row.run], ["Model", run.model],
                                 ["Relation", row.relation + (row.relation_label !== row.relation ? " (" + row.relation_label + ")" : "")],
                                 ["Frequency bucket", row.bucket], ["Strategy", row.strategy], ["ICL setting", row.setting]]) {
      if (value === null || value === undefined) continue;
      facts.appendChild(el("dt", name)); facts.appendChild(el("dd", value));
    }
    $("item-context").textContent = row.context;
    $("item-context-lines").textContent = row.context ? String(row.context.replace(/\n$/, "").split("\n").length) : "0";
    $("item-demonstrations").hidden = !row.context;
    $("item-question").textContent = row.question;
    $("item-pick").textContent = shown(row.pick);
    $("item-gold").textContent = shown(row.gold);
    $("item-names").textContent = (row.names || []).join(" · ");
    const outcome = $("item-outcome");
    outcome.textContent = row.outcome + (row.correct === null ? "" : " (correct " + shown(row.correct) + ")");
    outcome.className = row.outcome;
    $("item-score-name").textContent = row.score_name || "Score";
    const choices = document.querySelector("#item-choices tbody");
    clear(choices);
    for (const c of row.choices || []) {
      const tr = el("tr", null, {"data-testid": "choice-row", "data-picked": String(Boolean(c.picked)), "data-gold": String(Boolean(c.gold))});
      cell(tr, c.text); cell(tr, c.picked ? "picked" : ""); cell(tr, c.gold ? "gold" : "", c.gold ? "right" : "");
      cell(tr, shown(c.score)); cell(tr, c.note);
      choices.appendChild(tr);
    }
    const measures = document.querySelector("#item-measures tbody");
    clear(measures);
    for (const [name, value] of Object.entries(row.measures || {})) {
      const tr = el("tr"); tr.appendChild(el("th", name)); cell(tr, shown(value)); measures.appendChild(tr);
    }
    const notes = $("item-notes");
    clear(notes);
    const all_notes = (row.notes || []).slice();
    if (runs[row.run] && !runs[row.run].probe_set) all_notes.push(runs[row.run].probe_note || ("the run's probe set (" + runs[row.run].probes + ") was not found: prompts and choices are what items.jsonl holds"));
    for (const note of all_notes) notes.appendChild(el("li", note));
    $("item-raw").textContent = JSON.stringify(row, null, 1);
    if (served) {
      get(served.same + "?" + new URLSearchParams({id: row.id}).toString()).then(function (answer) {
        if (current === row) side(answer.rows);
      }).catch(function (error) { status("could not load the other runs: " + error.message); });
    } else {
      side(all.filter(function (other) { return other.id === row.id; }));
    }
    writeHash();
  }
  function side(rows) {
    const body = document.querySelector("#side-by-side tbody");
    clear(body);
    for (const other of rows) {
      const here = current && other.run === current.run && other.key === current.key;
      const tr = el("tr", null, {"data-testid": "side-row", "data-run": other.run, "data-key": other.key, "data-current": String(Boolean(here))});
      cell(tr, runs[other.run] ? runs[other.run].label : other.run); cell(tr, other.strategy || other.setting || "");
      cell(tr, other.pick); cell(tr, other.gold); cell(tr, other.outcome, other.outcome); cell(tr, shown(other.correct));
      tr.addEventListener("click", function () { open(other); });
      body.appendChild(tr);
    }
  }

  function reopen(hash) {
    const given = new URLSearchParams(hash.slice(1));
    const run = given.get("item-run"), id = given.get("item-id"), key = given.get("item-key");
    if (!run || !id) return;
    const pick = function (rows) {
      const found = rows.find(function (r) { return r.run === run && (r.key === key || !key); });
      if (found) open(found);
    };
    if (served) get(served.same + "?" + new URLSearchParams({id: id}).toString()).then(function (a) { pick(a.rows); });
    else pick(all.filter(function (r) { return r.id === id; }));
  }

  for (const f of FACETS.concat(["disagree"])) {
    $("filter-" + f).addEventListener("change", function () { query = fromForm(); page = 0; update(); });
  }
  $("filter-reset").addEventListener("click", function () {
    for (const f of FACETS.concat(["disagree"])) $("filter-" + f).value = "";
    query = fromForm(); page = 0; update();
  });
  $("page-prev").addEventListener("click", function () { if (page > 0) { page -= 1; update(); } });
  $("page-next").addEventListener("click", function () { page += 1; update(); });
  setRuns(data.runs);
  if (!served) fill(data.facets || {});
  const opened = location.hash;  // read first: update() rewrites the address before an item is open
  update();
  reopen(opened);
})();
"""
