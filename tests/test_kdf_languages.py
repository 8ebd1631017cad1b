"""KDF in its own language (issue 28): the question is the paper's sentence with a blank, "The
[relation] of [head] is [masked]" (seed 003 line 63; Table 3's Chinese sentences, lines 164-186),
asked in the names' language, with "A: ..." options and the answer line of Figure 3 (line 188:
"回答:A"); a relation without templates in that language is refused by name. Prompts are written
out by hand from the paper's text, not from the code."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from factprobe.probes.methods import MethodContext
from factprobe.probes.methods.kdf import KDF
from factprobe.probes.evaluation.runner import evaluate
from wikidata_builder import item, write_dump

# -- the method: Figure 3 of the paper, written out -----------------------------------------------


def _q(question: str, options: list[str], answer: str) -> dict:
    return {"question": question, "options": options, "answer": answer}


# Three of Figure 3's five demonstrations and its test question, as the paper prints them (line 188;
# the figure's blank is a drawn line, here "____", and the test question ends with Table 3's "。").
FIGURE_3 = {"id": "kdf:F", "fact": "F", "relation": "P36", "language": "zh",
            **_q("巴西的行政中心是____。", ["萨尔塞罗区", "沃伦顿 (北开普省)", "塔威塔威", "里约热内卢"], "D"),
            "demonstrations": [
                _q("《雪岭过江龙》的演员是____。", ["安吉・迪金森", "艾德・毕夏普", "阿图罗・格茨", "汉娜・博奇森纽斯"], "A"),
                _q("《波斯王子:遗忘之沙》的出版者是____。", ["米高梅互动娱乐公司", "育碧", "普罗米修斯出版社", "影子经纪人"], "B"),
                _q("《我要做警察》的制作商是____。", ["BBC新闻", "全景电影发行公司", "梦工厂经典影业公司", "传奇电影公司"], "D")]}

FIGURE_3_PROMPT = ("《雪岭过江龙》的演员是____。\nA: 安吉・迪金森\nB: 艾德・毕夏普\nC: 阿图罗・格茨\nD: 汉娜・博奇森纽斯\n回答:A\n\n"
                   "《波斯王子:遗忘之沙》的出版者是____。\nA: 米高梅互动娱乐公司\nB: 育碧\nC: 普罗米修斯出版社\nD: 影子经纪人\n回答:B\n\n"
                   "《我要做警察》的制作商是____。\nA: BBC新闻\nB: 全景电影发行公司\nC: 梦工厂经典影业公司\nD: 传奇电影公司\n回答:D\n\n"
                   "巴西的行政中心是____。\nA: 萨尔塞罗区\nB: 沃伦顿 (北开普省)\nC: 塔威塔威\nD: 里约热内卢\n回答:")


def test_the_paper_frame_writes_figure_3():
    method = KDF(MethodContext({}))
    assert method.options["frame"] == "paper"
    assert method.prompt(FIGURE_3) == FIGURE_3_PROMPT
    # the paper reads the logits of A, B, C and D as the first generated token (line 73): no space
    assert method.continuations(FIGURE_3) == ("A", "B", "C", "D")
    text = KDF(MethodContext({"scoring": "option-text"}))
    assert text.prompt(FIGURE_3).startswith("《雪岭过江龙》的演员是____。\nA: 安吉・迪金森\nB: 艾德・毕夏普\nC: 阿图罗・格茨\n"
                                            "D: 汉娜・博奇森纽斯\n回答:安吉・迪金森\n\n")
    assert text.continuations(FIGURE_3)[3] == "里约热内卢"


def test_the_paper_frame_in_english_and_the_earlier_frame_by_name():
    item_ = {**FIGURE_3, "language": "en", **_q("The capital of Brazil is ____", ["Salvador", "Rio de Janeiro",
                                                                                     "Recife", "Brasília"], "D"),
             "demonstrations": [_q("The genre of Hamlet is ____", ["tragedy", "comedy", "opera", "farce"], "A")]}
    assert KDF(MethodContext({})).prompt(item_) == (
        "The genre of Hamlet is ____\nA: tragedy\nB: comedy\nC: opera\nD: farce\nAnswer: A\n\n"
        "The capital of Brazil is ____\nA: Salvador\nB: Rio de Janeiro\nC: Recife\nD: Brasília\nAnswer:")
    assert KDF(MethodContext({})).continuations(item_) == (" A", " B", " C", " D")
    earlier = KDF(MethodContext({"frame": "qa"}))
    assert earlier.prompt(item_) == (
        "Question: The genre of Hamlet is ____\nA. tragedy\nB. comedy\nC. opera\nD. farce\nAnswer: A\n\n"
        "Question: The capital of Brazil is ____\nA. Salvador\nB. Rio de Janeiro\nC. Recife\nD. Brasília\nAnswer:")
    # the earlier frame is English whatever the item's language, as it was
    assert earlier.continuations(FIGURE_3) == (" A", " B", " C", " D")
    assert earlier.prompt(FIGURE_3).endswith("\nQuestion: 巴西的行政中心是____。\nA. 萨尔塞罗区\nB. 沃伦顿 (北开普省)\n"
                                            "C. 塔威塔威\nD. 里约热内卢\nAnswer:")
    # probe sets written before items carried a language are English
    old = {k: v for k, v in item_.items() if k != "language"}
    assert KDF(MethodContext({})).prompt(old) == KDF(MethodContext({})).prompt(item_)


def test_unknown_frames_and_languages_are_refused():
    with pytest.raises(ValueError, match="^method kdf: option frame: 'chat' is not one of paper, qa$"):
        KDF(MethodContext({"frame": "chat"}))
    with pytest.raises(ValueError, match="no answer line for language 'fr'.*frame=qa"):
        KDF(MethodContext({})).prompt({**FIGURE_3, "language": "fr"})


# -- the kind: a hand-made graph with Chinese and English names --------------------------------------

# country -> (en, zh, capital, continent)
COUNTRIES = {"Q142": ("France", "法国", "Q90", "Q46"), "Q17": ("Japan", "日本", "Q1490", "Q48"),
             "Q79": ("Egypt", "埃及", "Q85", "Q15"), "Q419": ("Peru", "秘鲁", "Q2868", "Q18")}
NAMES = {"Q90": ("Paris", "巴黎"), "Q1490": ("Tokyo", "东京"), "Q85": ("Cairo", "开罗"), "Q2868": ("Lima", "利马"),
         "Q46": ("Europe", "欧洲"), "Q48": ("Asia", "亚洲"), "Q15": ("Africa", "非洲"), "Q18": ("South America", "南美洲"),
         "Q150": ("French", "法语"), "Q7186": ("Marie Curie", "玛丽·居里")}


def _named(qid: str, en: str, zh: str, claims: dict | None = None) -> dict:
    entity = item(qid, en, (), claims)
    entity["labels"]["zh"] = {"language": "zh", "value": zh}
    return entity


def graph() -> list[dict]:
    entities = [_named(qid, en, zh, {"P36": [capital], "P30": [continent]})
                for qid, (en, zh, capital, continent) in COUNTRIES.items()]
    entities += [_named(qid, en, zh) for qid, (en, zh) in NAMES.items() if qid != "Q7186"]
    # P1412 (languages spoken) has English templates only
    return entities + [_named("Q7186", *NAMES["Q7186"], {"P1412": ["Q150"]})]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("zh")
    path = base / "g.sqlite"
    run_cli("ingest", "wikidata", str(write_dump(base / "g.json", graph())), "--store", str(path),
            "--languages", "en,zh", "--quiet", check=True)
    return str(path)


def _build(store: str, out, *args: str):
    return run_cli("probeset", "build", "--store", store, "--out", str(out), "--kind", "kdf", "--shots", "3", *args)


def _items(path) -> dict:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {(i["subject"], i["relation"]): i for i in rows}


def _written(question: dict, answer: str | None, answer_line: str) -> str:
    """A question as Figure 3 prints one, by hand: the question, "A: ..." lines, the answer line."""
    lines = [question["question"], *(f"{letter}: {o}" for letter, o in zip("ABCD", question["options"]))]
    return "\n".join(lines + [answer_line + (answer or "")])


def test_zh_build_asks_the_papers_chinese_sentence_with_chinese_names(store, tmp_path):
    out = tmp_path / "zh.jsonl"
    proc = _build(store, out, "--languages", "zh", "--relation", "P36", "--relation", "P30", "--json")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    assert meta["params"]["options"]["kdf_question"] == "paper"
    assert meta["source"]["kdf"]["language"] == "zh"
    items = _items(out)
    japan = items[("Q17", "P36")]
    # Table 3: "[头实体]的行政中心是[尾实体]。", the tail blanked
    assert japan["question"] == "日本的行政中心是____。" and japan["language"] == "zh"
    assert sorted(japan["options"]) == sorted(["巴黎", "东京", "开罗", "利马"])
    assert japan["options"]["ABCD".index(japan["answer"])] == "东京"
    assert items[("Q419", "P30")]["question"] == "秘鲁所在的大洲是____。"
    assert {d["question"] for d in japan["demonstrations"]} == {"法国所在的大洲是____。", "埃及所在的大洲是____。",
                                                                "秘鲁所在的大洲是____。"}
    # the prompt the method scores, as the paper's Figure 3 writes it
    evaluate(_Recorder(), "kdf", out, tmp_path / "run")
    records = {json.loads(line)["id"]: json.loads(line)
               for line in (tmp_path / "run" / "items.jsonl").read_text(encoding="utf-8").splitlines()}
    expected = "\n\n".join([*(_written(d, d["answer"], "回答:") for d in japan["demonstrations"]),
                            _written(japan, None, "回答:")])
    assert records[japan["id"]]["prompt"] == expected
    assert expected.startswith(japan["demonstrations"][0]["question"] + "\nA: ")
    assert expected.endswith("日本的行政中心是____。\nA: " + japan["options"][0] + "\nB: " + japan["options"][1]
                             + "\nC: " + japan["options"][2] + "\nD: " + japan["options"][3] + "\n回答:")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["options"]["frame"] == "paper"


def test_a_relation_without_a_zh_template_is_refused_by_name(store, tmp_path):
    for question in ("paper", "qa"):
        out = tmp_path / f"{question}.jsonl"
        proc = _build(store, out, "--languages", "zh", "--relation", "P36", "--relation", "P1412",
                      "--kdf-demonstrations", "same-relation", "--kdf-question", question)
        assert proc.returncode == 2
        [error] = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert error == ("error: P1412 has no zh template: KDF asks in the names' language (zh), never in another. "
                         "Add a `languages: zh:` section with a `kdf` sentence (and `qa` for --kdf-question qa) to "
                         "the relation's file in a --templates folder, or build with --languages en")
        assert not out.exists()


def test_english_asks_the_papers_pattern_and_the_qa_question_by_name(store, tmp_path):
    out = tmp_path / "en.jsonl"
    assert _build(store, out, "--languages", "en", "--relation", "P36", "--relation", "P30").returncode == 0
    items = _items(out)
    # "The [relation] of [head] is [masked]" (line 63), from the relation's label
    assert items[("Q17", "P36")]["question"] == "The capital of Japan is ____"
    assert items[("Q17", "P30")]["question"] == "The continent of Japan is ____"
    assert items[("Q17", "P36")]["language"] == "en"
    earlier = tmp_path / "qa.jsonl"
    proc = _build(store, earlier, "--languages", "en", "--relation", "P36", "--relation", "P30",
                  "--kdf-question", "qa", "--json")
    assert json.loads(proc.stdout)["params"]["options"]["kdf_question"] == "qa"
    assert _items(earlier)[("Q17", "P36")]["question"] == "What is the capital of Japan?"
    assert _items(earlier)[("Q17", "P30")]["question"] == "On which continent is Japan?"
    zh_qa = tmp_path / "zh-qa.jsonl"
    assert _build(store, zh_qa, "--languages", "zh", "--relation", "P36", "--relation", "P30",
                  "--kdf-question", "qa").returncode == 0
    assert _items(zh_qa)[("Q17", "P36")]["question"] == "日本的首都是哪里？"


class _Recorder:
    """A scorer that prefers A and keeps nothing: the prompts are read back from the run's records."""

    identity = "fake:recorder"

    def loglikelihood(self, requests):
        from types import SimpleNamespace

        return [[SimpleNamespace(logprob=-float(k), n_tokens=1) for k in range(len(r.continuations))]
                for r in requests]
