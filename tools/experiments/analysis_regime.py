"""Issue 52's regime experiment (tools/experiments/analyse.py regime): what would make early-layer QK-norm
gains grow as OMN-1's did. The tiny model trained at several contexts (equal tokens a step) x several
scales of the gains' AdamW LR, the same seeds in every arm; per arm (a context and a gain-LR scale) the
gains over training (`track` of every checkpoint), the early / late ratio and the early and late layers'
growth, the largest gain, the negative coordinates, the held-out NLL at the model's own training length
and the dependence on the gains (every gain, the early layers', the late layers' -> 1.0; each vector -> its
mean; each against the model's own control); then the issue's two hypotheses:

  (a) context: at a fixed gain LR, do the early / late ratio or the early layers' growth rise with the
      training context? Each context minus the shortest, paired by seed.
  (b) budget: AdamW moves a coordinate by about its LR a step whatever the gradient's scale, so how far a
      gain can travel is bounded by the gains' LR integral, sum_t lr_t (computed from each run's schedule,
      checked against its log). Does x k on the gains' LR move them x k further from 1.0 (budget-limited)
      or no further (gradient-limited)? The gain-LR arm over the base arm, per seed, at each context.

Intervals are Student-t over seeds, paired by seed where two arms are compared (the same seed: the same
initial weights), as the other analyses compute them (analysis_common.interval, paired)."""
import json
import os
import sys

from analysis_common import COLOURS, Study, checked_schedule, fmt, interval, lr_multiplier, paired, plt, root, verdict, whisk
from analysis_gains import collect_arms, distance_from_one, early_mean, late_mean, layer_mean, per_seed

ALL, VMEAN = "constant 1 qk all", "vector_mean qk all"


def arm_key(rec):
    """(training context, the gains' LR scale) of a run, from its train.json."""
    v = rec["config"]["values"]
    return v["seq_len"], v["optimizer"].get("qk_gain_lr_scale", 1.0)


def arm_label(ctx, scale):
    return "context %d, gains' LR ×%g" % (ctx, scale)


def gain_budget(rec, steps):
    """The gains' LR integral at each of `steps`: sum over the steps t <= s of the peak LR x the gains'
    scale x the schedule's factor at t (the distance a coordinate moving by its LR every step travels)."""
    lr = rec["config"]["values"]["optimizer"]["lr"] * arm_key(rec)[1]
    total, out, acc, t = rec["steps"], {}, 0.0, 0
    for s in sorted(steps):
        while t < s:
            t += 1
            acc += lr * lr_multiplier(rec["schedule"], t, total)
        out[s] = acc
    return out


def proportionality(iv, budget_ratio):
    """What a ratio of distances from 1.0 (a larger gain LR's over the base's, per seed) says against the
    ratio of their budgets: in proportion (budget-limited), no further (gradient-limited), or between."""
    if iv["mean"] is None:
        return "no value"
    if iv["low"] is None:
        return "one value: no interval"
    has_budget, has_one = iv["low"] <= budget_ratio <= iv["high"], iv["low"] <= 1 <= iv["high"]
    if has_budget and has_one:
        return "undecided (the interval contains both ×1 and the budget's ×%g)" % budget_ratio
    if has_budget:
        return "in proportion to the budget (the interval contains ×%g): budget-limited" % budget_ratio
    if has_one:
        return "no further than at the base LR (the interval contains ×1): gradient-limited"
    if 1 < iv["low"] and iv["high"] < budget_ratio:
        return "further, but less than in proportion (the interval lies between ×1 and ×%g): partly gradient-limited" % budget_ratio
    return ("further than in proportion to the budget (×%g)" % budget_ratio if iv["low"] > budget_ratio
            else "less far than at the base LR")


def run_values(x):
    """One finished run's numbers at the end of training, from its trajectory and sweep."""
    first, end = x["track"][0], x["track"][-1]
    prev = next((c for c in reversed(x["track"]) if c["step"] < end["step"]), first)
    d_end, d_prev = distance_from_one(end), distance_from_one(prev)
    b_end, b_prev = x["budget"][end["step"]], x["budget"][prev["step"]]
    n = len(end["layers"])
    e = x["effects"]
    return {"early_mean": early_mean(end), "late_mean": late_mean(end), "early_over_late": early_mean(end) / late_mean(end),
            "early_growth": early_mean(end) - early_mean(first), "late_growth": late_mean(end) - late_mean(first),
            "max": end["max"], "negative": end["negative"], "distance_furthest": d_end["furthest"], "distance_rms": d_end["rms"],
            "budget_use": d_end["furthest"] / b_end if b_end > 0 else None,
            "budget_use_rms": d_end["rms"] / b_end if b_end > 0 else None,
            "budget_use_last_interval": (d_end["furthest"] - d_prev["furthest"]) / (b_end - b_prev) if b_end > b_prev else None,
            "budget_use_last_minus_run": ((d_end["furthest"] - d_prev["furthest"]) / (b_end - b_prev) - d_end["furthest"] / b_end
                                          if b_end > b_prev and b_end > 0 else None),
            "gain_lr_budget": b_end, "panel_loss": x["panel_loss"],
            "dependence_all": e.get(ALL, {}).get("delta_nll"), "dependence_early": e.get("constant 1 qk 0-1", {}).get("delta_nll"),
            "dependence_late": e.get("constant 1 qk %d-%d" % (n - 2, n - 1), {}).get("delta_nll"),
            "dependence_vector_mean": e.get(VMEAN, {}).get("delta_nll")}


def omn1_reference():
    """OMN-1's published gain figures (configs/omn-1-reference-profile.json) read as this analysis reads
    a model: the early layers' mean, the largest gain, the negative coordinates. Its figures give layers 0,
    1 and 27 only, so its ratio is early over the last layer."""
    path = os.path.join(root, "configs", "omn-1-reference-profile.json")
    fig = {f["pointer"]: f["value"] for f in json.load(open(path))["figures"]}
    last = max(int(p.split("/")[2]) for p in fig if p.startswith("/layers/"))
    lay = {li: {"q": {"mean": fig["/layers/%d/q/mean" % li]}, "k": {"mean": fig["/layers/%d/k/mean" % li]}} for li in (0, 1, last)}
    c = {"layers": [lay.get(li) for li in range(last + 1)]}
    return {"source": os.path.relpath(path, root), "early_mean": early_mean(c), "last_layer": last, "last_layer_mean": layer_mean(c, last),
            "early_over_last_layer": early_mean(c) / layer_mean(c, last), "max": fig["/statistics/max"],
            "negative": fig["/statistics/count_negative"]}


def trajectory(done, seeds, n_layers):
    """An arm's gains at each checkpoint, over its finished runs: the budget spent so far, each layer's Q,
    K and Q/K gain means, the early and late means and their ratio, the largest gain, the negative
    coordinates, the distance from 1.0; each an interval over seeds."""
    out = []
    for st in sorted({c["step"] for x in done for c in x["track"]}):
        at = {x["seed"]: next((c for c in x["track"] if c["step"] == st), None) for x in done}
        ck = lambda f: interval([f(at[sd]) if at.get(sd) else None for sd in seeds])  # noqa: E731
        out.append({"step": st, "gain_lr_budget": interval(per_seed(done, seeds, lambda x: x["budget"][st] if at[x["seed"]] else None)),
                    "layers": [{"layer": li, "q": ck(lambda c: c["layers"][li]["q"]["mean"]), "k": ck(lambda c: c["layers"][li]["k"]["mean"]),
                                "qk": ck(lambda c: layer_mean(c, li))} for li in range(n_layers)],
                    "early_mean": ck(early_mean), "late_mean": ck(late_mean), "early_over_late": ck(lambda c: early_mean(c) / late_mean(c)),
                    "max": ck(lambda c: c["max"]), "negative": ck(lambda c: c["negative"]),
                    "distance_furthest": ck(lambda c: distance_from_one(c)["furthest"]), "distance_rms": ck(lambda c: distance_from_one(c)["rms"])})
    return out


def regime(job):
    studies = [Study(p) for p in job.study_paths]
    job.mark_partial(studies)
    recs = {(s.dir, r["id"]): s.train(r) for s in studies for r in s.runs}
    arms = collect_arms(studies, name=lambda s, r: arm_key(recs[(s.dir, r["id"])]))
    if not arms:
        sys.exit("analysis: no run of %s is in the store yet" % ", ".join(job.study_paths))
    for key, a in arms.items():
        twice = sorted({x["seed"] for x in a["runs"] if [y["seed"] for y in a["runs"]].count(x["seed"]) > 1})
        if twice:  # one run an arm and seed, or the pairing by seed would pick one silently
            sys.exit("analysis: %s has seed %d in more than one run (%s)" % (arm_label(*key), twice[0], ", ".join(
                os.path.join(x["study"].dir, x["id"]) for x in a["runs"] if x["seed"] == twice[0])))
        for x in a["runs"]:
            x["rec"] = rec = recs[(x["study"].dir, x["id"])]
            checked_schedule(rec, x["study"].log(x["run"], rec))
            x["budget"] = gain_budget(rec, [c["step"] for c in x["track"]] + [rec["steps"]])
            x["values"] = run_values(x) if x["status"] == "finished" and x["track"] else None
    seeds = sorted({x["seed"] for a in arms.values() for x in a["runs"]})
    contexts = sorted({k[0] for k in arms})
    scales = sorted({k[1] for k in arms})
    # one value a seed, in the order of seeds (None where the arm lacks the seed or the run did not finish)
    value = lambda ctx, scale, k: per_seed([x for x in arms.get((ctx, scale), {"runs": []})["runs"] if x["values"]], seeds,  # noqa: E731
                                           lambda x: x["values"][k])
    keys = ("early_mean", "late_mean", "early_over_late", "early_growth", "late_growth", "max", "negative", "distance_furthest",
            "distance_rms", "gain_lr_budget", "budget_use", "budget_use_rms", "budget_use_last_interval", "budget_use_last_minus_run", "panel_loss",
            "dependence_all", "dependence_early", "dependence_late", "dependence_vector_mean")
    table = {}
    for (ctx, scale) in sorted(arms, key=lambda k: (k[1], k[0])):
        a = arms[(ctx, scale)]
        done = [x for x in a["runs"] if x["values"]]
        v0 = a["runs"][0]["rec"]["config"]["values"]
        n_layers = len(done[0]["track"][-1]["layers"]) if done else 0
        traj = trajectory(done, seeds, n_layers)
        labels = sorted({label for x in done for label in x["effects"]})
        table[arm_label(ctx, scale)] = {
            "context": ctx, "gain_lr_scale": scale, "tokens_per_step": v0["batch_size"] * v0["seq_len"], "steps": v0["steps"],
            "layers": n_layers, "panel_tokens": done[0]["study"].panel_rows() * ctx if done else None,
            "runs": [x["id"] for x in a["runs"]], "not_finished": [x["id"] for x in a["runs"] if x["status"] != "finished"],
            "final": {k: interval(value(ctx, scale, k)) for k in keys},
            "sweep": {label: interval(per_seed(done, seeds, lambda x: x["effects"].get(label, {}).get("delta_nll"))) for label in labels},
            "trajectory": traj}

    # (a) the context, at a fixed gain LR: each context − the shortest, paired by seed
    base_ctx = contexts[0]
    what = {"early_over_late": "early / late ratio", "early_growth": "early layers' growth", "late_growth": "late layers' growth",
            "dependence_early": "dependence on the early layers' gains"}
    context_test = {"base_context": base_ctx, "by_gain_lr": {}}
    for scale in scales:
        rows = {}
        for ctx in contexts[1:]:
            row = {k: interval(paired(value(ctx, scale, k), value(base_ctx, scale, k))) for k in what}
            said = {k: verdict(row[k], w) for k, w in what.items()}  # each names what it is about
            row["verdicts"] = {k: v if v.startswith(what[k]) else "%s: %s" % (what[k], v) for k, v in said.items()}
            rows[str(ctx)] = row
        context_test["by_gain_lr"]["x%g" % scale] = rows

    # (b) the gains' LR budget: the larger gain LR's distance from 1.0 over the base's, per seed, at each context
    base_scale = scales[0]
    budget_test = {"base_gain_lr_scale": base_scale, "by_context": {}}
    for ctx in contexts:
        rows = {}
        for scale in scales[1:]:
            ratio = lambda k: interval(paired(value(ctx, scale, k), value(ctx, base_scale, k), lambda x, y: x / y))  # noqa: E731
            row = {"budget_ratio": ratio("gain_lr_budget"), "furthest_ratio": ratio("distance_furthest"), "rms_ratio": ratio("distance_rms"),
                   "early_growth_ratio": ratio("early_growth")}
            b = row["budget_ratio"]["mean"]
            row["verdict_furthest"] = proportionality(row["furthest_ratio"], b) if b is not None else "no value"
            row["verdict_rms"] = proportionality(row["rms_ratio"], b) if b is not None else "no value"
            rows["x%g" % scale] = row
        budget_test["by_context"][str(ctx)] = rows

    analysis = {"experiment": job.experiment, "studies": job.study_paths, "seeds": seeds, "contexts": contexts, "gain_lr_scales": scales,
                "layers": sorted({t["layers"] for t in table.values() if t["layers"]}),
                "steps": sorted({t["steps"] for t in table.values()}), "tokens_per_step": sorted({t["tokens_per_step"] for t in table.values()}),
                "panel_tokens": sorted({t["panel_tokens"] for t in table.values() if t["panel_tokens"]}),
                "definitions": {
                    "early": "layers 0-1, the mean of each layer's Q and K gain means (analysis_gains.early_mean, as depth)",
                    "late": "the last two layers, likewise (analysis_gains.late_mean)",
                    "growth": "the gain mean at the last checkpoint minus at the first (step 0, where every gain is 1.0)",
                    "distance_furthest": "max |g - 1| over every Q and K coordinate (analysis_gains.distance_from_one)",
                    "distance_rms": "sqrt(mean (g - 1)^2) over every Q and K coordinate",
                    "gain_lr_budget": "sum over the steps of peak LR x qk_gain_lr_scale x the schedule's factor (checked against log.jsonl's LR)",
                    "budget_use": "distance_furthest / gain_lr_budget; budget_use_last_interval: its change over the last checkpoint interval "
                                  "over that interval's budget (about 1: still moving by its LR a step; about 0: stopped); "
                                  "budget_use_last_minus_run: the last interval's use minus the whole run's, per seed (below 0: slowing "
                                  "for want of gradient, not of budget)",
                    "dependence": "ΔNLL/token against the model's own control on the held-out panel: every Q/K gain -> 1.0 (%s), layers 0-1 "
                                  "-> 1.0, the last two layers -> 1.0, each vector -> its mean (%s)" % (ALL, VMEAN)},
                "omn1_reference": omn1_reference(), "arms": table, "context_test": context_test, "budget_test": budget_test,
                "compute": job.compute_note(studies)}
    analysis["cpu"] = job.cpu_text(analysis["compute"])
    analysis["figure"] = job.save(figure(analysis), analysis["compute"])
    job.write(analysis, markdown(job, analysis))


def figure(an):
    arms = an["arms"]
    n_layers = max(an["layers"] or [0])
    cols = max(4, n_layers)
    fig, axes = plt.subplots(2, cols, figsize=(2.9 * cols, 6.8))
    colour = {ctx: COLOURS[i % len(COLOURS)] for i, ctx in enumerate(an["contexts"])}
    style = {sc: ("-", "--", ":", "-.")[i % 4] for i, sc in enumerate(an["gain_lr_scales"])}
    for li in range(cols):
        ax = axes[0][li]
        if li >= n_layers:
            ax.axis("off")
            continue
        for name, t in arms.items():
            pts = [(p["step"], p["layers"][li]["qk"]["mean"]) for p in t["trajectory"]
                   if li < len(p["layers"]) and p["layers"][li]["qk"]["mean"] is not None]
            if pts:
                ax.plot(*zip(*pts), color=colour[t["context"]], ls=style[t["gain_lr_scale"]], lw=1.3, label=name if li == 0 else None)
        ax.set_title("layer %d: Q/K gain mean over training\n(mean over seeds)" % li, fontsize=8)
        ax.set_xlabel("step")
    axes[0][0].set_ylabel("gain")
    ctxs, grey = an["contexts"], {sc: (COLOURS[6], COLOURS[4], COLOURS[3], COLOURS[5])[i % 4] for i, sc in enumerate(an["gain_lr_scales"])}
    final = lambda ctx, sc, k: arms.get(arm_label(ctx, sc), {}).get("final", {}).get(k, interval([]))  # noqa: E731
    ax = axes[1][0]
    for sc in an["gain_lr_scales"]:
        whisk(ax, ctxs, [final(ctx, sc, "early_over_late") for ctx in ctxs], grey[sc], "gains' LR ×%g" % sc, "o", ls=style[sc])
    ax.set_title("early / late gain mean at the end\n(95% t-interval over seeds)", fontsize=8)
    ax = axes[1][1]
    for j, sc in enumerate(an["gain_lr_scales"]):
        for k, mk, lab, off in (("early_growth", "o", "layers 0-1", 0.97), ("late_growth", "s", "last two layers", 1.03)):
            whisk(ax, ctxs, [final(ctx, sc, k) for ctx in ctxs], grey[sc], "%s, ×%g" % (lab, sc), mk, off, ls=style[sc])
    ax.axhline(0, color="#888", lw=0.8)
    ax.set_title("growth of the gain mean over training", fontsize=8)
    for ax in axes[1][:2]:
        ax.set_xscale("log")
        ax.set_xticks(ctxs)
        ax.set_xticklabels([str(c) for c in ctxs])
        ax.minorticks_off()
        ax.set_xlabel("training context (tokens)")
        ax.legend(fontsize=6, frameon=False, loc="best")
    ax = axes[1][2]
    seen = []
    for name, t in arms.items():
        pts = [(p["gain_lr_budget"]["mean"], p["distance_furthest"]["mean"]) for p in t["trajectory"]
               if p["gain_lr_budget"]["mean"] and p["distance_furthest"]["mean"]]
        if pts:
            ax.plot(*zip(*pts), color=colour[t["context"]], ls=style[t["gain_lr_scale"]], lw=1.3, marker=".", ms=3)
            seen += [v for p in pts for v in p]
    if seen:
        ax.plot([min(seen) / 1.5, max(seen) * 1.5], [min(seen) / 1.5, max(seen) * 1.5], color="#888", lw=0.8, ls=":",
                label="moved by its LR every step")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7, frameon=False, loc="upper left")
    ax.set_xlabel("the gains' LR integral so far, Σ lr")
    ax.set_ylabel("furthest gain from 1.0")
    ax.set_title("distance travelled against the LR budget\n(checkpoints, mean over seeds)", fontsize=8)
    ax = axes[1][3]
    conds = (("dependence_all", "all → 1"), ("dependence_early", "0-1 → 1"), ("dependence_late", "last 2 → 1"),
             ("dependence_vector_mean", "vector mean"))
    names = list(arms)
    for j, name in enumerate(names):
        t = arms[name]
        off = (j - (len(names) - 1) / 2) * 0.8 / len(names)
        ivs = [t["final"][k] for k, _ in conds]
        if any(iv["mean"] is not None for iv in ivs):
            whisk(ax, [i + off for i in range(len(conds))], ivs, colour[t["context"]], None,
                  "os^D"[an["gain_lr_scales"].index(t["gain_lr_scale"]) % 4], ls="none")
    ax.axhline(0, color="#888", lw=0.8)
    ax.set_xticks(range(len(conds)))
    ax.set_xticklabels([c[1] for c in conds], fontsize=7, rotation=25, ha="right")
    ax.set_ylabel("Δ held-out NLL (nats/token)")
    ax.set_title("dependence after training, vs own control\n(%s)" % ", ".join(
        "%s ×%g" % (("circles", "squares", "triangles", "diamonds")[i % 4], sc) for i, sc in enumerate(an["gain_lr_scales"])), fontsize=8)
    for li in range(4, cols):
        axes[1][li].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()  # the arms: colour the context, line the gain LR
    fig.legend(handles, labels, loc="lower center", ncol=max(len(an["contexts"]), 1), fontsize=7, frameon=False)
    fig.suptitle("%s: the tiny model, QK-norm on, seeds %s" % (an["experiment"], an["seeds"]), fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    return fig


def markdown(job, an):
    arms, ref = an["arms"], an["omn1_reference"]
    joined = lambda xs, f="%s": ", ".join(f % x for x in xs) or "—"  # noqa: E731
    thousands = lambda xs: ", ".join("{:,}".format(x) for x in xs) or "—"  # noqa: E731
    md = ["## %s: what makes early-layer gains grow: the training context, or the gains' LR budget?\n" % an["experiment"],
          "OMN-1 (`%s`): early-layer (0-1) Q/K gain mean %.3f, layer %d's %.3f (early / last layer %.2f), largest gain %.1f, %d negative "
          "coordinates. Here: the tiny model (%s layers), QK-norm on, OMN's routing, seeds %s, %s steps of %s tokens at training contexts %s, "
          "the gains' AdamW LR ×%s; early = layers 0-1, late = the last two (each layer's Q and K gain means, as depth-tiny); growth = the "
          "gain mean at the last checkpoint minus at step 0; each model scored on %s held-out panel tokens at its own training length (so "
          "the NLL is not comparable across contexts); intervals: 95 %% Student-t over seeds, paired by seed where two arms are compared "
          "(the same seed: the same initial weights).\n"
          % (ref["source"], ref["early_mean"], ref["last_layer"], ref["last_layer_mean"], ref["early_over_last_layer"], ref["max"],
             ref["negative"], joined(an["layers"]), an["seeds"], thousands(an["steps"]), thousands(an["tokens_per_step"]),
             thousands(an["contexts"]), " and ×".join("%g" % s for s in an["gain_lr_scales"]), thousands(an["panel_tokens"])),
          "### At the end of training\n",
          "| arm | early-layer gain mean | late-layer gain mean | early / late | early growth | late growth | largest gain | negative gains (per seed) | held-out NLL |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, t in arms.items():
        f = t["final"]
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |" % (
            name, fmt(f["early_mean"], 3), fmt(f["late_mean"], 3), fmt(f["early_over_late"], 3), fmt(f["early_growth"], 3, True),
            fmt(f["late_growth"], 3, True), fmt(f["max"], 3), fmt(f["negative"], 1), joined(["—" if v is None else "%d" % v for v in f["negative"]["values"]]),
            fmt(f["panel_loss"])))
    not_done = [r for t in arms.values() for r in t["not_finished"]]
    if not_done:
        md.append("\nNot finished (no model to score): %s." % ", ".join(not_done))
    md += ["", "Dependence: ΔNLL/token of each model against its own control on its panel.\n",
           "| arm | every gain → 1.0 | layers 0-1 → 1.0 | last two layers → 1.0 | each vector → its mean |", "|---|---:|---:|---:|---:|"]
    for name, t in arms.items():
        f = t["final"]
        md.append("| %s | %s | %s | %s | %s |" % (name, *(fmt(f[k], sign=True) for k in
                                                          ("dependence_all", "dependence_early", "dependence_late", "dependence_vector_mean"))))
    steps = sorted({p["step"] for t in arms.values() for p in t["trajectory"]})
    md += ["", "### Per-layer Q/K gain means over training\n",
           "Each layer's mean of its Q and K gain means at each checkpoint (`track`), mean over seeds, the last checkpoint with its "
           "95 % t-interval; every checkpoint's interval, and Q and K apart, are in analysis.json (`arms/ARM/trajectory`).\n",
           "| arm | layer | " + " | ".join("%d" % s for s in steps) + " |", "|---|---:|" + "---:|" * len(steps)]
    for name, t in arms.items():
        for li in range(t["layers"]):
            by = {p["step"]: p["layers"][li]["qk"] for p in t["trajectory"]}
            md.append("| %s | %d | %s |" % (name, li, " | ".join("—" if s not in by else fmt(by[s], 3) if s == steps[-1] else fmt(
                dict(by[s], low=None), 3) for s in steps)))
    ct = an["context_test"]
    md += ["", "### (a) Does the early-layer regime grow with the training context? (at a fixed gain LR)\n",
           "Each context minus context %d, paired by seed:\n" % ct["base_context"],
           "| gains' LR | context | Δ early / late | Δ early growth | Δ late growth | Δ dependence on layers 0-1 |", "|---|---:|---:|---:|---:|---:|"]
    for sc, rows in ct["by_gain_lr"].items():
        for ctx, row in rows.items():
            md.append("| %s | %s − %d | %s | %s | %s | %s |" % (sc.replace("x", "×"), ctx, ct["base_context"], fmt(row["early_over_late"], 3, True),
                                                            fmt(row["early_growth"], 3, True), fmt(row["late_growth"], 3, True),
                                                            fmt(row["dependence_early"], 4, True)))
    md += ["", "Read (from the intervals above):", ""]
    for sc, rows in ct["by_gain_lr"].items():
        for ctx, row in rows.items():
            md.append("- gains' LR %s, context %s − %d: %s." % (sc.replace("x", "×"), ctx, ct["base_context"], "; ".join(row["verdicts"].values())))
    bt = an["budget_test"]
    md += ["", "### (b) Budget-limited or gradient-limited? (the gains' LR integral against the distance they travelled)\n",
           "Σ lr: the gains' LR integral over training (from each run's schedule, checked against its log). The furthest gain's distance "
           "from 1.0 and the root mean square distance of every Q/K gain at the last checkpoint; use = furthest distance / Σ lr (about 1: "
           "the furthest gain moved by its LR every step); last-interval use: the same over the last checkpoint interval (about 1: still "
           "moving at the budget's rate at the end; about 0: stopped).\n",
           "| arm | Σ lr (gains) | furthest from 1.0 | RMS from 1.0 | use | last-interval use |", "|---|---:|---:|---:|---:|---:|"]
    for name, t in arms.items():
        f = t["final"]
        md.append("| %s | %s | %s | %s | %s | %s |" % (name, fmt(f["gain_lr_budget"], 3), fmt(f["distance_furthest"], 3), fmt(f["distance_rms"], 3),
                                                     fmt(f["budget_use"], 3), fmt(f["budget_use_last_interval"], 3, True)))
    md += ["", "Stopped, or still spending the budget? The last interval's use minus the whole run's, per seed (below 0: the furthest "
           "gain moved less per unit of LR at the end than over the run):", ""]
    for name, t in arms.items():
        md.append("- %s: %s (%s)." % (name, fmt(t["final"]["budget_use_last_minus_run"], 3, True),
                                      verdict(t["final"]["budget_use_last_minus_run"], "last-interval use")))
    md += ["", "Each larger gain LR over ×%g at the same context, per seed (the budget's ratio is the LRs'):\n" % bt["base_gain_lr_scale"],
           "| context | gains' LR | Σ lr ratio | furthest-distance ratio | RMS-distance ratio | early-growth ratio |", "|---:|---|---:|---:|---:|---:|"]
    for ctx, rows in bt["by_context"].items():
        for sc, row in rows.items():
            md.append("| %s | %s / ×%g | %s | %s | %s | %s |" % (ctx, sc.replace("x", "×"), bt["base_gain_lr_scale"], fmt(row["budget_ratio"], 3),
                                                              fmt(row["furthest_ratio"], 3), fmt(row["rms_ratio"], 3), fmt(row["early_growth_ratio"], 3)))
    md += ["", "Read (from the intervals above):", ""]
    for ctx, rows in bt["by_context"].items():
        for sc, row in rows.items():
            md.append("- context %s, gains' LR %s over ×%g: the furthest gain's distance from 1.0: %s; the RMS distance: %s." % (
                ctx, sc.replace("x", "×"), bt["base_gain_lr_scale"], row["verdict_furthest"], row["verdict_rms"]))
    comp = an["compute"]
    md += ["", "Compute (%s): %.2f h of training (%d runs, the runs' own timing), %.2f h of post-training sweeps.%s" % (
        an["cpu"], comp["training_seconds"] / 3600, sum(len(t["runs"]) for t in arms.values()), comp["sweep_seconds"] / 3600,
        job.cut_text(comp)), "",
        "![%s](../figures/experiments/%s.svg)" % (job.experiment, job.experiment), ""]
    return "\n".join(md)
