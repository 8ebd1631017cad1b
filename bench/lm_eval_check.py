"""factprobe and lm-evaluation-harness on the same probe sets, item by item: each set is exported
(`factprobe export lm-eval`), evaluated by factprobe and run by harness (in this process, its
HFLM wrapping the model factprobe loaded), and every document's choice compared. Not a timing.

    python bench/lm_eval_check.py                       # the sample job's sets (runs/sample, first
                                                        # `factprobe run`), with the sample's options
    python bench/lm_eval_check.py --case SET METHOD '{"examples": 4}' --out /tmp/check

Prints, per set, harness's acc and factprobe's accuracy, how many documents pick the same choice
(or, for BELIEF-ICL, give the same text), ties, and the largest gold log-probability difference;
with --rows every document. Exit 1 on any disagreement. Harness runs with factprobe unimportable
(`without_factprobe`), as where factprobe is not installed: an exported task that needs factprobe
fails here. tests/test_lm_eval_export.py runs the same comparison (`compare`) on small sets in CI,
and harness in an interpreter that never had factprobe (`python -I -S`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import json
import sys
from pathlib import Path

from factprobe.probes.methods.kdf import LETTERS

TOLERANCE = 1e-4  # nats: the same model object on both sides (bench/peer.py's bound)
# The sample job's sets and the options kg/data/sample_pipeline.yaml evaluates them with (BELIEF-ICL:
# greedy answers only, which is what harness's `acc` reads; one sample keeps it cheap)
SAMPLE_CASES = [
    ("runs/sample/probesets/kdf.jsonl", "kdf", {}),
    ("runs/sample/probesets/capitals-mc.jsonl", "ic-lke", {"separator": ": ", "examples": 10}),
    ("runs/sample/probesets/belief-icl.jsonl", "belief-icl",
     {"settings": ["zero-shot", "x-template"], "samples": 1, "max_tokens": 6}),
]


def compare(method: str, records: list[dict], samples: list[dict]) -> tuple[list[tuple], list[tuple], list[str]]:
    """factprobe's records against harness's logged samples of the exported task: (rows,
    disagreements, ties), one row per harness document. A choice disagrees when the picks, the
    verdicts or the gold log-probabilities (beyond TOLERANCE) differ; BELIEF-ICL's documents when
    the greedy texts or the verdicts differ."""
    by_doc = {(s["doc"]["id"], s["doc"].get("prompt_index"), s["doc"].get("setting")): s for s in samples}
    rows, wrong, ties = [], [], []
    for record in records:
        if method == "belief-icl":
            # a belief-icl item is one question; a cloze item's questions are its prompts (prompt_index)
            asked = [(p["index"], p["by_setting"]) for p in record["prompts"]] if "prompts" in record else [
                (None, record["by_setting"])]
            for index, by_setting in asked:
                for setting, answer in by_setting.items():
                    sample = by_doc[(record["id"], index, setting)]
                    text = sample["filtered_resps"][0].strip()
                    where = record["id"] if index is None else f"{record['id']}#{index}"
                    row = (f"{where} {setting}", text, answer["prediction"], sample["acc"], float(answer["correct"]))
                    rows.append(row)
                    if text != answer["prediction"] or sample["acc"] != float(answer["correct"]):
                        wrong.append(row)
            continue
        sample = by_doc[(record["id"], None, None)]
        lls = [float(x[0]) for x in sample["filtered_resps"]]
        picked = lls.index(max(lls))
        ours = LETTERS.index(record["prediction"]) if method == "kdf" else record["predicted_index"]
        if lls.count(max(lls)) > 1:
            ties.append(record["id"])
        gold = sample["doc"]["answer"]
        ours_gold = record["letter_logprobs"][gold] if method == "kdf" else record["gold_logprob"]
        row = (record["id"], picked, ours, sample["acc"], float(record["correct"]), abs(lls[gold] - ours_gold))
        rows.append(row)
        if picked != ours or sample["acc"] != float(record["correct"]) or row[-1] > TOLERANCE:
            wrong.append(row)
    return rows, wrong, ties


class _Refuse(importlib.abc.MetaPathFinder):
    """A finder that refuses factprobe and its modules, as an interpreter without it would."""

    def find_spec(self, name, path=None, target=None):
        if name == "factprobe" or name.startswith("factprobe."):
            raise ModuleNotFoundError(f"No module named {name!r} (factprobe is hidden while harness runs)", name=name)
        return None


@contextlib.contextmanager
def without_factprobe():
    """factprobe unimportable for the duration (its modules out of sys.modules, a finder refusing
    them), then back: harness runs an exported task here as where factprobe is not installed."""
    hidden = {name: sys.modules.pop(name) for name in list(sys.modules)
              if name == "factprobe" or name.startswith("factprobe.")}
    finder = _Refuse()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        sys.modules.update(hidden)


def check(scorer, lm, cases, out: Path) -> list[dict]:
    """Export, evaluate and run every case; one summary per case (rows included)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from factprobe.probes.formats.export_lm_eval import export_lm_eval
    from factprobe.probes.evaluation.runner import evaluate

    found = []
    for k, (probes, method, options) in enumerate(cases):
        folder = out / f"{k}-{method}"
        task = export_lm_eval(method, probes, folder / "task", options=options).name
        summary = evaluate(scorer, method, probes, folder / "run", options=options)
        records = [json.loads(line) for line in open(Path(summary.out) / "items.jsonl", encoding="utf-8")]
        manager = TaskManager(include_path=[str(folder / "task")], include_defaults=False)
        with contextlib.chdir(folder), without_factprobe():
            result = simple_evaluate(model=lm, tasks=[task], log_samples=True, bootstrap_iters=0,
                                     task_manager=manager)
        rows, wrong, ties = compare(method, records, result["samples"][task])
        found.append({"probes": str(probes), "method": method, "documents": len(rows),
                      "harness_acc": result["results"][task]["acc,none"],
                      "factprobe_accuracy": summary.aggregate["accuracy"], "same": len(rows) - len(wrong),
                      "ties": ties, "largest_difference": max((r[-1] for r in rows if method != "belief-icl"),
                                                               default=None),
                      "rows": rows, "wrong": wrong})
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--case", nargs=3, action="append", metavar=("SET", "METHOD", "OPTIONS_JSON"))
    parser.add_argument("--out", default="lm_eval_check")
    parser.add_argument("--rows", action="store_true", help="print every document")
    args = parser.parse_args()
    import torch
    from lm_eval.models.huggingface import HFLM

    from factprobe.probes.scoring.loader import load_scorer

    cases = [(p, m, json.loads(o)) for p, m, o in args.case] if args.case else SAMPLE_CASES
    missing = [p for p, _, _ in cases if not Path(p).is_file()]
    if missing:
        print(f"error: no probe set {', '.join(missing)} (the sample's: run `factprobe run` first)", file=sys.stderr)
        return 2
    torch.set_num_threads(1)  # both sides alike; on 2 shared cores one thread is the faster
    scorer = load_scorer(args.model, device="cpu", dtype="float32")
    lm = HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=16, device="cpu")
    results = check(scorer, lm, cases, Path(args.out))
    print("| set | method | documents | harness acc | factprobe accuracy | same | ties | largest gold log-prob difference |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        largest = "n/a" if r["largest_difference"] is None else f"{r['largest_difference']:.1e} nats"
        print(f"| {Path(r['probes']).name} | {r['method']} | {r['documents']} | {r['harness_acc']:.4f} | "
              f"{r['factprobe_accuracy']:.4f} | {r['same']}/{r['documents']} | {len(r['ties'])} | {largest} |")
        for row in r["rows"] if args.rows else r["wrong"]:
            print("   ", " | ".join(map(str, row)))
    return 1 if any(r["wrong"] or r["ties"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
