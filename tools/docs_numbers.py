#!/usr/bin/env python3
"""The numbers the README and docs/train.md state about the demo, generated from the records committed
beside the demo model.

Every number they state about the demo comes from a committed JSON record, through this script:
  demo/tiny-sotu/results/sweep.json    the demo's sweep (tools/demo.sh wrote it; the raw per-sequence values)
  demo/tiny-sotu/results/profile.json  the demo model's gains
  demo/tiny-sotu/train.json            the run that trained the demo model (tools/make-demo-model.sh)
  results/qk-lr-tiny/analysis.json     seed 003's study at the tiny scale (the README's qk-lr-tiny lines)
Each generated paragraph sits between `<!-- generated: NAME -->` and `<!-- end: NAME -->` in its page.

  docs_numbers.py --check            exit 1 if a page differs from what the records give (the test)
  docs_numbers.py --write            rewrite the generated paragraphs
  docs_numbers.py --record DIR       copy DIR/sweep.json and DIR/profile.json (a demo run's output) into
                                     demo/tiny-sotu/results/, then --write
  docs_numbers.py --compare SWEEP    how far a demo run's sweep is from the committed record (tools/demo.sh)
"""
import argparse
import json
import math
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = "demo/tiny-sotu/results"
SWEEP = RESULTS + "/sweep.json"
PROFILE = RESULTS + "/profile.json"
TRAIN = "demo/tiny-sotu/train.json"


def load(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return json.load(f)


def condition(sweep, op, target, layers="all", value=None):
    """The sweep's one condition applying `op` to `target` over `layers` (at `value`)."""
    found = [c for c in sweep["conditions"]
             if c["op"]["op"] == op and c["op"].get("target") == target
             and c["op"].get("layers") == layers and c["op"].get("value") == value]
    if len(found) != 1:
        raise SystemExit("docs_numbers: %s holds %d conditions %s %s %s %s, expected one"
                         % (SWEEP, len(found), op, target, layers, value))
    return found[0]


def ratio(c, ci=False):
    r = c["vs_control"]["ppl_ratio"]
    text = "×%.3f" % r["estimate"]
    return text + (" [%.3f, %.3f]" % (r["low"], r["high"]) if ci else "")


def host(doc):
    p = doc["provenance"]
    return "%s, build %s" % (p["host"]["cpu"], p["git_revision"][:7])


def demo_sweep(sweep):
    control = sweep["control"]["open"]["result"]
    ci = control["perplexity_ci"]
    one_qk = condition(sweep, "constant", "qk", value=1.0)
    level = round(one_qk["vs_control"]["confidence"] * 100)
    return (
        "What it measured (`%s`, recorded on %s;\n"
        "`tools/demo.sh` writes your run's to `build/demo/sweep.json` and says how far it lies from this\n"
        "record): held-out perplexity %.2f [%.2f, %.2f]; every gain set to **1.0 on Q and K: %s,\n"
        "paired %d%% CI [%.3f, %.3f]**; 1.0 on Q only %s; 2.0 on both %s;\n"
        "halving every gain %s; each vector replaced by its own mean (pattern removed, scale kept)\n"
        "%s; one global mean %s; Q and K swapped %s. Small model, small\n"
        "effects — but real ones, and every number is recomputable from the raw per-sequence values in the\n"
        "JSON."
    ) % (SWEEP, host(sweep), control["perplexity"], ci["low"], ci["high"], ratio(one_qk), level,
         one_qk["vs_control"]["ppl_ratio"]["low"], one_qk["vs_control"]["ppl_ratio"]["high"],
         ratio(condition(sweep, "constant", "q", value=1.0), ci=True),
         ratio(condition(sweep, "constant", "qk", value=2.0)),
         ratio(condition(sweep, "scale", "qk", value=0.5)),
         ratio(condition(sweep, "vector_mean", "qk")),
         ratio(condition(sweep, "global_mean", "qk")),
         ratio(condition(sweep, "swap_qk", "qk"), ci=True))


def duration(seconds):
    minutes, rest = divmod(int(round(seconds)), 60)
    return "%d min %d s" % (minutes, rest) if minutes else "%d s" % rest


def demo_training(train, profile):
    values = train["config"]["values"]
    means = [(layer["mean"], layer["layer"]) for layer in profile["layers"]]
    low, high = min(means), max(means)
    return (
        "`%s` (%.2fM parameters, %d steps of %d×%d tokens) trained the demo model in %s\n"
        "on %d threads (%s) to a held-out loss of %.2f nats/token, against %.2f for a\n"
        "unigram model of the training text; its Q/K gains moved from 1.0 to layer means of %.2f (layer %d)\n"
        "to %.2f (layer %d) (`%s`, `%s`)."
    ) % (train["config"]["path"], train["model"]["parameters"] / 1e6, train["steps_done"], values["batch_size"],
         values["seq_len"], duration(train["timing"]["seconds"]), train["threads"], host(train),
         train["final_heldout_loss"], train["heldout_unigram_cross_entropy"], low[0], low[1], high[0], high[1],
         TRAIN, PROFILE)


def tiny_run(train, profile):
    """docs/train.md's measured tiny run: timing, the held-out loss at each evaluation, the gains."""
    evals = train["evals"]
    steps = " | ".join(str(e["step"]) for e in evals)
    losses = " | ".join(("**%.3f**" if i == len(evals) - 1 else "%.3f") % e["heldout_loss"] for i, e in enumerate(evals))
    thresholds = ", ".join("%.1f at step %d" % (t["threshold"], t["step"]) for t in train["steps_to_threshold"])
    layers = profile["layers"]
    means = ", ".join("Q %.3f / K %.3f (layer %d)" % (l["q"]["mean"], l["k"]["mean"], l["layer"]) for l in layers)
    low = min(min(l["q"]["min"], l["k"]["min"]) for l in layers)
    high = max(max(l["q"]["max"], l["k"]["max"]) for l in layers)
    return (
        "The run that made the demo model (`%s`) took **%s** wall on %d threads of %s\n"
        "(%.0f tokens/s). Held-out loss (%d rows of %d tokens of the held-out addresses) at each evaluation:\n"
        "\n"
        "| step | %s |\n"
        "| --- |%s\n"
        "| held-out loss (nats/token) | %s |\n"
        "\n"
        "against **%.3f** for the unigram model of the training tokens (`corpus.json` `unigram`). Steps to\n"
        "threshold: %s. The Q/K gains left 1.0: layer means\n%s;\nrange %.3f to %.3f\n"
        "(`omn-audit profile demo/tiny-sotu/final.pt`: `%s`)."
    ) % (TRAIN, duration(train["timing"]["seconds"]), train["threads"], host(train),
         train["timing"]["tokens_per_second"], train["config"]["values"]["eval"]["rows"], train["config"]["values"]["seq_len"],
         steps, " --- |" * len(evals), losses, train["heldout_unigram_cross_entropy"], thresholds, means, low, high, PROFILE)


QK_LR = "results/qk-lr-tiny/analysis.json"


def qk_lr_tiny():
    """The README's lines on seed 003's study at the tiny scale, from the qk-lr-tiny experiment's analysis."""
    if not os.path.exists(os.path.join(ROOT, QK_LR)):
        return ("Its numbers are in the store once the `qk-lr-tiny` experiment's runs are (`tools/run-experiments.sh\n"
                "qk-lr-tiny`; docs/results.md lists it under \"In progress\" until then).")
    a = load(QK_LR)
    best = a["best_lr"]
    bb = a["best_vs_best"]
    return (
        "In the store (`%s`, one seed: values, no claims): each arm's best LR, chosen on the training-time\n"
        "rows, is %.3g with QK-norm and %.3g without; at them the held-out NLL on the panel is %.3f (on) and\n"
        "%.3f (off); %d of %d runs with QK-norm and %d without did not finish. The table at every LR:\n"
        "docs/results.md (`qk-lr-tiny`)."
    ) % (QK_LR, best["qk_on"], best["qk_off"], bb["on"]["mean"], bb["off"]["mean"], a["diverged"]["qk_on"],
         len(a["lrs"]) * len(a["seeds"]), a["diverged"]["qk_off"])


def blocks():
    """{page: {block name: text}}"""
    sweep, profile, train = load(SWEEP), load(PROFILE), load(TRAIN)
    return {"README.md": {"demo-sweep": demo_sweep(sweep), "demo-training": demo_training(train, profile),
                          "qk-lr-tiny": qk_lr_tiny()},
            "docs/train.md": {"tiny-run": tiny_run(train, profile)}}


def render(page, readme, generated):
    for name, text in generated.items():
        pattern = re.compile(r"(<!-- generated: %s -->\n).*?(\n<!-- end: %s -->)" % (re.escape(name), re.escape(name)),
                             re.S)
        if not pattern.search(readme):
            raise SystemExit("docs_numbers: %s has no <!-- generated: %s --> ... <!-- end: %s --> block"
                             % (page, name, name))
        readme = pattern.sub(lambda m: m.group(1) + text + m.group(2), readme)
    return readme


def compare(path):
    """Largest difference between a demo run's sweep and the committed record, per quantity."""
    with open(path, encoding="utf-8") as f:
        fresh = json.load(f)
    record = load(SWEEP)
    worst_ppl = abs(math.log(fresh["control"]["open"]["result"]["perplexity"]
                             / record["control"]["open"]["result"]["perplexity"]))
    worst_ratio = 0.0
    for c in record["conditions"]:
        a = c["op"]
        mine = condition(fresh, a["op"], a.get("target"), a.get("layers"), a.get("value"))
        worst_ratio = max(worst_ratio, abs(mine["vs_control"]["ppl_ratio"]["estimate"]
                                           - c["vs_control"]["ppl_ratio"]["estimate"]))
    print("this run against the README's record (%s, %s): control perplexity within a factor e^%.1e, "
          "every ratio within %.1e (the README prints ratios to 3 decimals)"
          % (SWEEP, host(record), worst_ppl, worst_ratio))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--record", metavar="DIR")
    mode.add_argument("--compare", metavar="SWEEP")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare)
        return 0
    if args.record:
        os.makedirs(os.path.join(ROOT, RESULTS), exist_ok=True)
        for name in ("sweep.json", "profile.json"):
            shutil.copyfile(os.path.join(args.record, name), os.path.join(ROOT, RESULTS, name))
    stale = []
    for page, generated in blocks().items():
        path = os.path.join(ROOT, page)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        updated = render(page, text, generated)
        if updated == text:
            continue
        stale.append(page)
        if not args.check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(updated)
    if args.check and stale:
        sys.stderr.write("docs_numbers: the generated paragraphs of %s differ from the committed records; "
                         "run tools/docs_numbers.py --write\n" % ", ".join(stale))
        return 1
    if args.check:
        print("docs_numbers: the README's and docs/train.md's demo numbers are the committed records'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
