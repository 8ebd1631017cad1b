"""One statement of a Wikidata JSON record, read into the parts of its fact row: main value, rank,
statement id and validity qualifiers (P580/P582/P585, a fact's time columns).

A value that cannot be read costs the smallest unit that holds it: `statement` raises BadField
(path relative to the statement) when the statement itself cannot be stored as written, and
returns the validity qualifiers it could not read beside the rest, to be dropped alone. Other
qualifiers and references are never stored, so they are never read: a bad one costs nothing.
The checks are written out inline: the bulk path runs this for every statement of a dump.
"""

from __future__ import annotations

import orjson

from ..model import END_TIME, POINT_IN_TIME, RANKS, START_TIME, TimeValue
from .wikidata_values import (
    BadField,
    decimal,
    entity_id,
    expected,
    integer,
    is_entity_id,
    number,
    obj_field,
    optional_text,
    text,
    time_value,
)

_SKIPPED_DATATYPES = frozenset({"external-id"})
_dumps = orjson.dumps

# The datavalue type each datatype holds; a statement whose value is of another type is wrong
# (e.g. a string where the property holds entities). Datatypes not listed are not checked.
_ENTITY_VALUE = "wikibase-entityid"
_DATAVALUE_OF = {
    **dict.fromkeys(("wikibase-item", "wikibase-property", "wikibase-lexeme", "wikibase-form",
                     "wikibase-sense", "entity-schema"), _ENTITY_VALUE),
    "time": "time", "quantity": "quantity", "monolingualtext": "monolingualtext",
    "globe-coordinate": "globecoordinate",
    **dict.fromkeys(("string", "external-id", "url", "commonsMedia", "geo-shape", "tabular-data", "math",
                     "musical-notation"), "string"),
}
_DATAVALUE_TYPES = frozenset(_DATAVALUE_OF.values())
_ENTITY_PREFIX = {"item": "Q", "property": "P", "lexeme": "L"}
_VALIDITY = (START_TIME, END_TIME, POINT_IN_TIME)

# (path inside the statement, what is wrong, the unit's JSON) of a qualifier left out
Dropped = tuple[str, BadField, object]


def _entity_value(v: object) -> tuple[str, str]:
    """(id, entity type) of a wikibase-entityid value."""
    if type(v) is not dict:
        raise BadField("", expected("an object", v))
    kind = optional_text(v, "entity-type", "item")
    if not kind:
        raise BadField("entity-type", "empty")
    if "id" in v:
        return entity_id(v["id"], "id"), kind
    # very old dumps carry only numeric-id
    number_ = integer(v.get("numeric-id"), "numeric-id", 1, (1 << 63) - 1)
    return entity_id(f"{_ENTITY_PREFIX.get(kind, 'Q')}{number_}", "numeric-id"), kind


def _datavalue(kind: str, v: object) -> tuple[str | None, str, str | None, str | None]:
    """(object id, value type, literal, extra JSON) of a datavalue of type `kind`; BadField
    paths are relative to the datavalue."""
    try:
        if kind == _ENTITY_VALUE:
            eid, etype = _entity_value(v)
            return eid, etype, None, None
        if type(v) is not dict and kind != "string":
            raise BadField("", expected("an object", v))
        if kind == "time":
            t = time_value(v)
            calendar = optional_text(v, "calendarmodel", "")
            extra = {"precision": v.get("precision"), "calendar": calendar.rsplit("/", 1)[-1]}
            return None, "time", t.time, _dumps(extra).decode()
        if kind == "quantity":
            unit = optional_text(v, "unit", "1")
            extra = {"unit": unit.rsplit("/", 1)[-1] if unit != "1" else "1"}
            for bound in ("lowerBound", "upperBound"):
                if bound in v:
                    extra[bound] = decimal(v[bound], bound)
            return None, "quantity", decimal(v.get("amount"), "amount"), _dumps(extra).decode()
        if kind == "string":
            return None, "string", text(v, ""), None
        if kind == "monolingualtext":
            return (None, "monolingualtext", text(v.get("text"), "text"),
                    _dumps({"language": text(v.get("language"), "language")}).decode())
        if kind == "globecoordinate":
            lat, lon = number(v.get("latitude"), "latitude", 90), number(v.get("longitude"), "longitude", 360)
            precision = v.get("precision")
            if precision is not None:
                number(precision, "precision", 360)
            globe = v.get("globe")
            extra = {"latitude": lat, "longitude": lon, "precision": precision,
                     "globe": (text(globe, "globe") if globe is not None else "").rsplit("/", 1)[-1]}
            return None, "globecoordinate", f"{lat},{lon}", _dumps(extra).decode()
    except BadField as exc:
        raise exc.within("value") from None
    raise BadField("type", f"unknown datavalue type {kind!r}")


def _validity_time(snak: object) -> TimeValue | None:
    """The time of one validity qualifier snak (None for somevalue/novalue); BadField paths are
    relative to the snak."""
    if type(snak) is not dict:
        raise BadField("", expected("an object", snak))
    if optional_text(snak, "snaktype", "value") != "value":
        return None
    dv = obj_field(snak, "datavalue")
    if dv.get("type") != "time":
        raise BadField("datavalue.type", f"expected 'time' (a validity qualifier), got {dv.get('type')!r:.40}")
    try:
        return time_value(dv.get("value"), keyed=True)
    except BadField as exc:
        raise exc.within("datavalue.value") from None


def _qualifier_times(qualifiers: dict) -> tuple[tuple, list[Dropped]]:
    """(start, end, point in time) of a statement, each the first readable snak of its
    qualifier, and the snaks that could not be read (each dropped alone: the others and the
    statement stay)."""
    dropped: list[Dropped] = []
    times = []
    for prop in _VALIDITY:
        snaks = qualifiers.get(prop)
        found = None
        if snaks is not None and type(snaks) is not list:
            dropped.append((f"qualifiers.{prop}", BadField("", expected("an array", snaks)), snaks))
        elif snaks is not None:
            for k, snak in enumerate(snaks):
                try:
                    t = _validity_time(snak)
                except BadField as exc:
                    dropped.append((f"qualifiers.{prop}[{k}]", exc, snak))
                    continue
                found = found or t
        times.append(found)
    return tuple(times), dropped


def statement(st: object, keep_ext: bool) -> tuple | None:
    """(object, value type, literal, extra, rank, statement id, qualifier times or None, the
    qualifiers dropped) of a statement; None for an external id that is not kept. BadField:
    the statement cannot be stored as written (its path relative to the statement)."""
    if type(st) is not dict:
        raise BadField("", expected("an object", st))
    snak = st.get("mainsnak")
    if type(snak) is not dict:
        raise BadField("mainsnak", "missing" if snak is None else expected("an object", snak))
    datatype = snak.get("datatype")
    if datatype is not None and (type(datatype) is not str or "\x00" in datatype):
        raise BadField("mainsnak.datatype", expected("a string", datatype) if type(datatype) is not str
                       else "contains a NUL character")
    if datatype in _SKIPPED_DATATYPES and not keep_ext:
        return None
    snaktype = snak.get("snaktype", "value")
    if snaktype == "value":
        dv = snak.get("datavalue")
        if type(dv) is not dict:
            raise BadField("mainsnak.datavalue", "missing" if dv is None else expected("an object", dv))
        kind, v = dv.get("type"), dv.get("value")
        # Entity values are the most common kind: decoded here without a call.
        if (kind == _ENTITY_VALUE and type(v) is dict and type(obj := v.get("id")) is str
                and is_entity_id(obj) and v.get("entity-type", "item") == "item"):
            vtype, value, extra = "item", None, None
        else:
            if type(kind) is not str:
                raise BadField("mainsnak.datavalue.type", expected("a string", kind))
            if kind not in _DATAVALUE_TYPES:
                raise BadField("mainsnak.datavalue.type", f"unknown datavalue type {kind[:40]!r}")
            try:
                obj, vtype, value, extra = _datavalue(kind, v)
            except BadField as exc:
                raise exc.within("mainsnak.datavalue") from None
        holds = _DATAVALUE_OF.get(datatype)
        if holds is not None and holds != kind:
            raise BadField("mainsnak.datavalue.type",
                           f"{kind!r} where the property's datatype {datatype!r} holds {holds!r}")
    elif snaktype == "somevalue" or snaktype == "novalue":
        obj, vtype, value, extra = None, snaktype, None, None
    elif type(snaktype) is not str or "\x00" in snaktype:
        raise BadField("mainsnak.snaktype", expected("a string", snaktype) if type(snaktype) is not str
                       else "contains a NUL character")
    else:
        raise BadField("mainsnak.snaktype", f"unknown snaktype {snaktype[:40]!r}")
    rank = st.get("rank", "normal")
    rank_value = RANKS.get(rank) if type(rank) is str else None
    if rank_value is None:
        raise BadField("rank", expected("a string", rank) if type(rank) is not str else f"unknown rank {rank[:40]!r}")
    sid = st.get("id")
    if sid is not None and (type(sid) is not str or "\x00" in sid):
        raise BadField("id", expected("a string", sid) if type(sid) is not str else "contains a NUL character")
    q = st.get("qualifiers")
    if not q:
        if q is None or q == [] or q == {}:
            return obj, vtype, value, extra, rank_value, sid, None, None
        raise BadField("qualifiers", expected("an object", q))
    if type(q) is not dict:
        raise BadField("qualifiers", expected("an object", q))
    times, dropped = _qualifier_times(q)
    return obj, vtype, value, extra, rank_value, sid, times, dropped
