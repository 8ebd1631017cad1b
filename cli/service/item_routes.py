"""The HTTP service's `items` routes (one APIRouter): the item view over every run it knows, the
folders `serve --runs DIR` names (a run folder, or a folder of them) and its finished eval jobs.
GET /items answers a filter, page by page (the query parameters are items_filter.py's facets,
each repeatable; `disagree` true or false), GET /items/same every run's rows of one item, and
GET /items/view the report's item page (probes/report/items_page.py) fetching from them. The rows
are items_shape.py's `ItemRow`, read from the runs' offsets (item_index.py). No token needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from ...probes.report.items_filter import FACETS, ItemQuery
from .item_index import ItemCatalog, KnownRun, StaleIndex, facets_of

items_router = APIRouter(tags=["items"])


class ItemChoice(BaseModel):
    text: str
    score: float | None = None
    picked: bool = False
    gold: bool = False
    note: str = ""


class ItemRow(BaseModel):
    """One row of the view: a record, or its part for one ICL setting or distractor strategy."""
    run: str
    method: str
    id: str
    key: str
    relation: str
    relation_label: str
    subject: str
    bucket: str
    strategy: str | None = None
    setting: str | None = None
    outcome: Literal["right", "wrong", "partly", "unscored"]
    correct: float | None = None
    disagree: bool
    context: str
    question: str
    pick: str | None = None
    gold: str | None = None
    names: list[str]
    score_name: str
    choices: list[ItemChoice]
    measures: dict[str, Any]
    notes: list[str]


class ItemRun(BaseModel):
    run: str
    label: str
    name: str
    model: str
    method: str
    folder: str
    probes: str
    probe_set: str | None = None  # where its probe set was found; None: prompts and choices are the records'
    probe_note: str | None = None  # why a file of the probe set's name is not used (its bytes are not the run's)
    items: int
    rows: int
    rejected: int  # lines of items.jsonl that are not records


class ItemPage(BaseModel):
    total: int  # rows matching the filter
    offset: int
    limit: int
    next_offset: int | None
    runs: list[ItemRun]
    facets: dict[str, list[str]]  # per facet, the values the runs' rows have
    rows: list[ItemRow]


class SameItem(BaseModel):
    id: str
    rows: list[ItemRow]


def catalog(request: Request) -> ItemCatalog:
    return request.app.state.items


Catalog = Annotated[ItemCatalog, Depends(catalog)]
Facet = Annotated[list[str] | None, Query(description="keep the rows with one of these values (repeatable); "
                                                           "GET /items lists the values under `facets`")]


@items_router.get("/items", response_model=ItemPage)
def items(items: Catalog, run: Facet = None, method: Facet = None, relation: Facet = None, bucket: Facet = None,
          strategy: Facet = None, setting: Facet = None,
          outcome: Annotated[list[Literal["right", "wrong", "partly", "unscored"]] | None, Query()] = None,
          disagree: Annotated[bool | None, Query(description="true: the rows the runs disagree on (right in one "
                                                             "run, wrong or partly in another); false: the others")] = None,
          offset: Annotated[int, Query(ge=0, le=100_000_000)] = 0,
          limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict:
    """The rows of every run the service knows that the filter keeps, in run order then file order:
    each facet (repeatable) keeps the rows with one of its values; facets combine with and. A
    script pages with `next_offset`:
    `curl 'http://127.0.0.1:8000/items?method=kdf&outcome=wrong&disagree=true&limit=500'`."""
    given = dict(zip(FACETS, (run, method, relation, bucket, strategy, setting, outcome)))
    query = ItemQuery.of({**given, "disagree": disagree})
    try:
        total, rows, views = items.page(query, offset, limit)
    except StaleIndex as stale:  # a file changed under the index mid-read: the next request indexes it anew
        raise HTTPException(409, str(stale)) from None
    return {"total": total, "offset": offset, "limit": limit,
            "next_offset": offset + limit if offset + limit < total else None,
            "runs": [view.entry() for view in views], "facets": facets_of(views), "rows": rows}


@items_router.get("/items/same", response_model=SameItem)
def same_item(items: Catalog, id: Annotated[str, Query(min_length=1, max_length=1000)]) -> dict:
    """One item in every run that has it: the side-by-side of the view."""
    try:
        return {"id": id, "rows": items.same(id)}
    except StaleIndex as stale:
        raise HTTPException(409, str(stale)) from None


@items_router.get("/items/view", response_class=HTMLResponse)
def items_view() -> HTMLResponse:
    """The item view's page: the report's items.html, fetching its rows from /items."""
    from ...probes.report.items_page import items_html

    payload = {"format": 1, "served": {"endpoint": "../items", "same": "../items/same"}, "runs": [], "rows": [],
               "facets": {}, "sample": None}
    return HTMLResponse(items_html(payload, "factprobe: item by item", back=None))


def known_runs(folders: tuple[Path, ...], jobs) -> list[KnownRun]:
    """The runs under `folders` (each a run folder or a folder of them, `serve --runs`), then the
    finished eval jobs of the data folder (`jobs`: its JobQueue), named job-<id>."""
    found: list[KnownRun] = []
    taken: set[str] = set()

    def add(name: str, folder: Path, probes: tuple[Path, ...] = ()) -> None:
        unique, k = name, 2
        while unique in taken:
            unique, k = f"{name}-{k}", k + 1
        taken.add(unique)
        found.append(KnownRun(unique, folder, probes))

    for root in folders:
        if (root / "run.json").is_file():
            add(root.name, root)
        elif root.is_dir():
            for sub in sorted(p for p in root.iterdir() if (p / "run.json").is_file()):
                add(sub.name, sub)
    if jobs is not None:
        for job in jobs.store.page("done", 0, 100_000):
            if job.kind == "eval" and (job.run_dir / "run.json").is_file():
                source = jobs.get(str(job.params.get("probeset_job", "")))
                add(f"job-{job.id}", job.run_dir, (source.probes,) if source is not None else ())
    return found
