"""The item view's page, one self-contained HTML file (no CDN, no server): its rows embedded as
JSON in <script type="application/json" id="items-data">, escaped so that no item text ends the
script, and a plain script (items_script.py) that builds every element from text nodes, never
from markup. The same page, with `served` set, fetches its rows page by page from the service's
/items instead (cli/service/item_routes.py). Element ids, each with the same data-testid:
filters `filter-run`, `filter-method`, `filter-relation`, `filter-bucket`, `filter-strategy`,
`filter-setting`, `filter-outcome` (selects, "" for any) and `filter-disagree` ("", "true",
"false"), `filter-reset`; `item-count`, `sample-notice` (only when sampled), `items-status`;
the list `item-list`, its rows `tr[data-testid=item-row]` (data-run, data-id, data-key,
data-outcome), `page-prev`, `page-next`, `page-info`; the detail `item-detail` with
`detail-title`, `item-demonstrations` (a <details>) holding `item-context`, `item-question`,
`item-pick`, `item-gold`, `item-names`, `item-outcome`, `item-choices` (rows
`tr[data-testid=choice-row]`, data-picked, data-gold), `item-measures`, `item-notes`,
`item-raw`; and `side-by-side`, rows `tr[data-testid=side-row]` (data-run, data-key, data-current).
"""

from __future__ import annotations

import html
import json
import math
import re

from .items_script import SCRIPT

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1em auto; max-width: 110em; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin: 0.6em 0 0.3em; }
table { border-collapse: collapse; font-size: 0.88em; max-width: 100%; }
/* words never part inside (issue 48.3: "Scor ed"): a cell wraps at spaces, a long word widens its column */
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; overflow-wrap: break-word;
  min-width: 2em; }
th { background: #f2f2f2; }
#item-filters { display: flex; flex-wrap: wrap; gap: 0.4em 1em; margin: 0.5em 0; }
#item-filters label { display: flex; flex-direction: column; font-size: 0.85em; }
#item-filters select { max-width: 22em; }
#items-layout { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1em; }
/* the list a quarter of the width beside the item (issue 48.5), scrolled sideways when its words need more,
   its right edge dragged to widen it */
@media (min-width: 1100px) { #items-layout { grid-template-columns: auto minmax(0, 1fr); }
  #item-list-pane { width: 30vw; min-width: 14em; max-width: 75vw; resize: horizontal; overflow: auto; }
  /* method, relation and bucket are the filters' and the open item's: the narrow list leaves them out */
  #item-list th:nth-child(2), #item-list td:nth-child(2), #item-list th:nth-child(3), #item-list td:nth-child(3),
  #item-list th:nth-child(4), #item-list td:nth-child(4) { display: none; } }
#item-list { width: 100%; }
#item-list tbody tr { cursor: pointer; }
#item-list tbody tr:hover, #item-list tbody tr:focus, tr[data-current="true"] { background: #eef4ff; }
#item-list tbody tr[aria-selected="true"] { outline: 2px solid #4a7bd0; }
.right { color: #17692b; } .wrong { color: #a4161a; } .partly { color: #8a5a00; } .unscored { color: #666; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 0.4em; margin: 0.3em 0; }
#item-detail { position: sticky; top: 0.5em; align-self: start; max-height: 97vh; overflow: auto; }
#item-detail dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.1em 0.8em; margin: 0.3em 0; }
#item-detail dt { font-weight: 600; }
tr[data-picked="true"] td, tr[data-gold="true"] td { font-weight: 600; }
#sample-notice { background: #fff6d6; border: 1px solid #e0c25a; padding: 0.4em 0.6em; }
""".strip()


def embedded_json(payload: dict) -> str:
    """The payload as JSON that cannot end its <script> element: <, > and & as \\u escapes (JSON
    reads them back as the same characters), U+2028/2029 escaped too; NaN and infinities, which
    JSON has not, as null."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(finite_json(payload), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def finite_json(value):
    """`value` with NaN and infinities as None (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_json(v) for v in value]
    return value


# The page; each __NAME__ is filled once, in one pass, so nothing filled in is read again.
_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="factprobe report">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>__TITLE__</title>
<style>
__CSS__
</style>
</head>
<body>
<h1>__TITLE__</h1>
__LINK__<p>Every item of every run: filter, then open a row for its prompt (demonstrations folded), its choices or
answers with their scores, the model's pick, the gold and its names, and the same item in the other runs.
"Runs disagree": the item (with its setting or strategy) is right in one run and wrong or partly right in another.</p>
__NOTICE__<details id="runs" data-testid="runs"><summary>The runs: <span id="runs-count"></span></summary>
<table id="runs-legend" data-testid="runs-legend"><thead><tr><th>Run</th><th>Label</th><th>Model</th><th>Folder</th>
<th>Probe set</th></tr></thead><tbody></tbody></table></details>
<form id="item-filters" data-testid="item-filters" onsubmit="return false">
__FILTERS__
<label>Runs <select id="filter-disagree" name="disagree" data-testid="filter-disagree"><option value="">any</option>
<option value="true">disagree</option><option value="false">agree</option></select></label>
<label>&nbsp;<button type="button" id="filter-reset" data-testid="filter-reset">Reset</button></label>
</form>
<p><span id="item-count" data-testid="item-count"></span> <span id="items-status" data-testid="items-status"></span></p>
<div id="items-layout">
<div id="item-list-pane" data-testid="item-list-pane">
<table id="item-list" data-testid="item-list"><thead><tr><th>Run</th><th>Method</th><th>Relation</th><th>Bucket</th>
<th>Strategy / setting</th><th>Subject</th><th>Pick</th><th>Gold</th><th>Outcome</th></tr></thead>
<tbody id="item-rows"></tbody></table>
<p><button type="button" id="page-prev" data-testid="page-prev">Previous</button>
<span id="page-info" data-testid="page-info"></span>
<button type="button" id="page-next" data-testid="page-next">Next</button></p>
</div>
<section id="item-detail" data-testid="item-detail" hidden>
<h2 id="detail-title" data-testid="detail-title"></h2>
<dl id="detail-facts" data-testid="detail-facts"></dl>
<details id="item-demonstrations" data-testid="item-demonstrations"><summary>Before the question
(demonstrations, instruction): <span id="item-context-lines"></span> line(s)</summary>
<pre id="item-context" data-testid="item-context"></pre></details>
<h3>Question</h3>
<pre id="item-question" data-testid="item-question"></pre>
<dl>
<dt>Model's pick</dt><dd id="item-pick" data-testid="item-pick"></dd>
<dt>Gold</dt><dd id="item-gold" data-testid="item-gold"></dd>
<dt>Gold names</dt><dd id="item-names" data-testid="item-names"></dd>
<dt>Outcome</dt><dd id="item-outcome" data-testid="item-outcome"></dd>
</dl>
<table id="item-choices" data-testid="item-choices"><thead><tr><th>Choice / answer</th><th>Picked</th><th>Gold</th>
<th id="item-score-name">Score</th><th>Note</th></tr></thead><tbody></tbody></table>
<table id="item-measures" data-testid="item-measures"><tbody></tbody></table>
<ul id="item-notes" data-testid="item-notes"></ul>
<h3>The same item in the other runs</h3>
<table id="side-by-side" data-testid="side-by-side"><thead><tr><th>Run</th><th>Strategy / setting</th><th>Pick</th>
<th>Gold</th><th>Outcome</th><th>Correct</th></tr></thead><tbody></tbody></table>
<details><summary>The row as data</summary><pre id="item-raw" data-testid="item-raw"></pre></details>
</section>
</div>
<script type="application/json" id="items-data">__DATA__</script>
<script>
__SCRIPT__
</script>
</body>
</html>
"""
_SLOT = re.compile(r"__(TITLE|CSS|LINK|NOTICE|FILTERS|DATA|SCRIPT)__")


def items_html(payload: dict, title: str, back: str | None = "report.html") -> str:
    """The page over `payload` (items_data.items_payload; with "served" it fetches its rows).
    `back`: the report the page links to, None for none."""
    sample = (payload.get("sample") or {}).get("notice")
    notice = f'<p id="sample-notice" data-testid="sample-notice">{html.escape(sample)}</p>\n' if sample else ""
    link = f'<p><a href="{html.escape(back)}">Back to the report</a></p>\n' if back else ""
    filters = "\n".join(
        f'<label>{html.escape(name)} <select id="filter-{facet}" name="{facet}" data-testid="filter-{facet}">'
        '<option value="">any</option></select></label>'
        for facet, name in (("run", "Run"), ("method", "Method"), ("relation", "Relation"), ("bucket", "Frequency bucket"),
                            ("strategy", "Distractor strategy"), ("setting", "ICL setting"), ("outcome", "Right / wrong")))
    slots = {"TITLE": html.escape(title), "CSS": _CSS, "LINK": link, "NOTICE": notice, "FILTERS": filters,
             "DATA": embedded_json(payload), "SCRIPT": SCRIPT}
    return _SLOT.sub(lambda m: slots[m.group(1)], _PAGE)
