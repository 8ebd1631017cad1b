#!/usr/bin/env python3
"""Build the shipped Chinese sample for KDF in its own language (issue 28): ``sample_zh_wikidata.json``
(28 real countries with capital, official language and continent, Chinese and English labels, in
Wikidata's JSON dump layout) and ``sample_zh_corpus.jsonl`` (short Chinese documents).

The KDF paper counts documents that mention a fact's head and tail by their Chinese names (seed 003
lines 59-60). Here each fact is planted in a known number of documents, one fact per document: the
better known a country, the more documents (the first five facts of a relation 100+, the next seven
10-99, the next seven 1-9, the rest none), so the four KDF buckets are all filled. No name is part
of another name (英国/英语, 法国/法语: none contains another), so the planted counts are the
co-occurrence counts. Ids and facts are Wikidata's; a fact not certain was left out. Byte-for-byte
reproducible. Usage: python build_sample_zh.py [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODIFIED = "2026-01-01T00:00:00Z"
COUNTRY, CITY, LANGUAGE, CONTINENT = "Q6256", "Q515", "Q34770", "Q5107"
TYPES = {COUNTRY: ("国家", "country"), CITY: ("城市", "city"), LANGUAGE: ("语言", "language"),
         CONTINENT: ("大洲", "continent")}
PROPERTIES = {"P31": ("instance of", None), "P36": ("capital", "首都"), "P37": ("official language", "官方语言"),
              "P30": ("continent", "大洲")}
CONTINENTS = {"Q46": ("欧洲", "Europe"), "Q48": ("亚洲", "Asia"), "Q15": ("非洲", "Africa"),
              "Q49": ("北美洲", "North America"), "Q18": ("南美洲", "South America"), "Q538": ("大洋洲", "Oceania")}
LANGUAGES = {"Q1860": ("英语", "English"), "Q150": ("法语", "French"), "Q188": ("德语", "German"),
             "Q5287": ("日语", "Japanese"), "Q7737": ("俄语", "Russian"), "Q1321": ("西班牙语", "Spanish"),
             "Q13955": ("阿拉伯语", "Arabic"), "Q1568": ("印地语", "Hindi"), "Q9176": ("朝鲜语", "Korean"),
             "Q7838": ("斯瓦希里语", "Swahili"), "Q7411": ("荷兰语", "Dutch"), "Q9168": ("波斯语", "Persian"),
             "Q9217": ("泰语", "Thai"), "Q1617": ("乌尔都语", "Urdu"), "Q28244": ("阿姆哈拉语", "Amharic")}
# best known first: country -> (zh, en, (capital, zh, en), official languages, continents)
COUNTRIES = {
    "Q148": ("中国", "China", ("Q956", "北京", "Beijing"), (), ("Q48",)),
    "Q30": ("美国", "United States", ("Q61", "华盛顿哥伦比亚特区", "Washington, D.C."), (), ("Q49",)),
    "Q145": ("英国", "United Kingdom", ("Q84", "伦敦", "London"), ("Q1860",), ("Q46",)),
    "Q142": ("法国", "France", ("Q90", "巴黎", "Paris"), ("Q150",), ("Q46",)),
    "Q17": ("日本", "Japan", ("Q1490", "东京", "Tokyo"), ("Q5287",), ("Q48",)),
    "Q183": ("德国", "Germany", ("Q64", "柏林", "Berlin"), ("Q188",), ("Q46",)),
    "Q159": ("俄罗斯", "Russia", ("Q649", "莫斯科", "Moscow"), ("Q7737",), ("Q46", "Q48")),
    "Q668": ("印度", "India", ("Q987", "新德里", "New Delhi"), ("Q1568", "Q1860"), ("Q48",)),
    "Q16": ("加拿大", "Canada", ("Q1930", "渥太华", "Ottawa"), ("Q1860", "Q150"), ("Q49",)),
    "Q884": ("韩国", "South Korea", ("Q8684", "首尔", "Seoul"), ("Q9176",), ("Q48",)),
    "Q79": ("埃及", "Egypt", ("Q85", "开罗", "Cairo"), ("Q13955",), ("Q15",)),
    "Q414": ("阿根廷", "Argentina", ("Q1486", "布宜诺斯艾利斯", "Buenos Aires"), ("Q1321",), ("Q18",)),
    "Q39": ("瑞士", "Switzerland", ("Q70", "伯尔尼", "Bern"), ("Q188", "Q150"), ("Q46",)),
    "Q40": ("奥地利", "Austria", ("Q1741", "维也纳", "Vienna"), ("Q188",), ("Q46",)),
    "Q869": ("泰国", "Thailand", ("Q1861", "曼谷", "Bangkok"), ("Q9217",), ("Q48",)),
    "Q794": ("伊朗", "Iran", ("Q3616", "德黑兰", "Tehran"), ("Q9168",), ("Q48",)),
    "Q31": ("比利时", "Belgium", ("Q239", "布鲁塞尔", "Brussels"), ("Q7411", "Q150", "Q188"), ("Q46",)),
    "Q664": ("新西兰", "New Zealand", ("Q23661", "惠灵顿", "Wellington"), (), ("Q538",)),
    "Q843": ("巴基斯坦", "Pakistan", ("Q1362", "伊斯兰堡", "Islamabad"), ("Q1617", "Q1860"), ("Q48",)),
    "Q1033": ("尼日利亚", "Nigeria", ("Q3787", "阿布贾", "Abuja"), ("Q1860",), ("Q15",)),
    "Q114": ("肯尼亚", "Kenya", ("Q3870", "内罗毕", "Nairobi"), ("Q7838", "Q1860"), ("Q15",)),
    "Q419": ("秘鲁", "Peru", ("Q2868", "利马", "Lima"), ("Q1321",), ("Q18",)),
    "Q298": ("智利", "Chile", ("Q2887", "圣地亚哥", "Santiago"), (), ("Q18",)),
    "Q1028": ("摩洛哥", "Morocco", ("Q3551", "拉巴特", "Rabat"), ("Q13955",), ("Q15",)),
    "Q115": ("埃塞俄比亚", "Ethiopia", ("Q3624", "亚的斯亚贝巴", "Addis Ababa"), ("Q28244",), ("Q15",)),
    "Q117": ("加纳", "Ghana", ("Q3761", "阿克拉", "Accra"), ("Q1860",), ("Q15",)),
    "Q736": ("厄瓜多尔", "Ecuador", ("Q2900", "基多", "Quito"), ("Q1321",), ("Q18",)),
    "Q717": ("委内瑞拉", "Venezuela", ("Q1533", "加拉加斯", "Caracas"), ("Q1321",), ("Q18",)),
}
SENTENCES = {
    "P36": ["{t}是{h}的首都。", "{h}的首都是{t}。", "我们从{t}出发，开始了在{h}的旅行。", "{h}政府设在{t}。",
            "{t}是{h}最重要的城市之一。"],
    "P37": ["{h}的官方语言是{t}。", "在{h}，很多人说{t}。", "{t}是{h}的官方语言之一。", "{h}的学校用{t}教学。"],
    "P30": ["{h}位于{t}。", "{h}是{t}的一个国家。", "从地图上看，{h}在{t}。", "{t}有许多国家，其中包括{h}。"],
}
ALONE = ["{n}有着悠久的历史。", "今天有一篇关于{n}的报道。", "{n}发布了新的统计数据。"]
# documents per fact, by its rank within its relation (best known first); beyond the list: none
COUNTS = [130, 121, 115, 108, 100, 60, 45, 33, 24, 17, 13, 10, 8, 6, 5, 3, 2, 1, 1]


def _labels(zh: str | None, en: str) -> dict:
    labels = {"en": {"language": "en", "value": en}}
    if zh:
        labels["zh"] = {"language": "zh", "value": zh}
    return labels


def _statement(subject: str, prop: str, obj: str, k: int) -> dict:
    return {"mainsnak": {"snaktype": "value", "property": prop, "datatype": "wikibase-item",
                         "datavalue": {"type": "wikibase-entityid",
                                       "value": {"entity-type": "item", "numeric-id": int(obj[1:]), "id": obj}}},
            "type": "statement", "id": f"{subject}${prop}-{k}", "rank": "normal"}


def _item(qid: str, zh: str, en: str, claims: dict[str, tuple[str, ...]]) -> dict:
    return {"type": "item", "id": qid, "labels": _labels(zh, en), "aliases": {},
            "claims": {p: [_statement(qid, p, o, k) for k, o in enumerate(objs)] for p, objs in claims.items()},
            "modified": MODIFIED}


def entities() -> list[dict]:
    out = [{"type": "property", "datatype": "wikibase-item", "id": pid, "labels": _labels(zh, en), "aliases": {},
            "claims": {}, "modified": MODIFIED} for pid, (en, zh) in PROPERTIES.items()]
    out += [_item(qid, zh, en, {}) for qid, (zh, en) in TYPES.items()]
    out += [_item(qid, zh, en, {"P31": (CONTINENT,)}) for qid, (zh, en) in CONTINENTS.items()]
    out += [_item(qid, zh, en, {"P31": (LANGUAGE,)}) for qid, (zh, en) in LANGUAGES.items()]
    for qid, (zh, en, (capital, capital_zh, capital_en), languages, continents) in COUNTRIES.items():
        claims = {"P31": (COUNTRY,), "P36": (capital,), "P30": continents}
        out.append(_item(qid, zh, en, {**claims, **({"P37": languages} if languages else {})}))
        out.append(_item(capital, capital_zh, capital_en, {"P31": (CITY,)}))
    return out


def facts() -> dict[str, list[tuple[str, str]]]:
    """Relation -> (head, tail) names in Chinese, best-known country first."""
    names = {**{q: v[0] for q, v in {**CONTINENTS, **LANGUAGES}.items()},
             **{c[2][0]: c[2][1] for c in COUNTRIES.values()}}
    out: dict[str, list[tuple[str, str]]] = {"P36": [], "P37": [], "P30": []}
    for zh, _, (capital, _, _), languages, continents in COUNTRIES.values():
        out["P36"].append((zh, names[capital]))
        out["P37"] += [(zh, names[language]) for language in languages]
        out["P30"] += [(zh, names[continent]) for continent in continents]
    return out


def documents() -> list[str]:
    rng = random.Random(0)
    texts = []
    for relation, pairs in facts().items():
        for rank, (head, tail) in enumerate(pairs):
            for k in range(COUNTS[rank] if rank < len(COUNTS) else 0):
                texts.append(SENTENCES[relation][k % len(SENTENCES[relation])].format(h=head, t=tail))
    alone = sorted({name for pairs in facts().values() for pair in pairs for name in pair})
    texts += [ALONE[k % len(ALONE)].format(n=name) for k, name in enumerate(alone)]
    rng.shuffle(texts)
    return texts


def build(out_dir: Path) -> tuple[int, int]:
    graph = entities()
    (out_dir / "sample_zh_wikidata.json").write_text(
        "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in graph) + "\n]\n", encoding="utf-8")
    texts = documents()
    with open(out_dir / "sample_zh_corpus.jsonl", "w", encoding="utf-8") as sink:
        for k, text in enumerate(texts):
            sink.write(json.dumps({"id": f"zh{k:05d}", "title": "", "text": text}, ensure_ascii=False) + "\n")
    return len(graph), len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=HERE)
    args = parser.parse_args()
    n_entities, n_documents = build(args.out_dir)
    print(f"{n_entities} entities, {n_documents:,} documents -> {args.out_dir}")


if __name__ == "__main__":
    main()
