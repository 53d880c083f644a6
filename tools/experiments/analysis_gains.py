"""Experiments 3 and 4 (tools/experiments/analyse.py routing|depth): where the learned gains go, run by
run (`track`), and how much each model depends on them: which factor of the routing moves them, and
whether an early-layer regime like OMN-1's appears with depth or length. What a gain trajectory is read
as (per-layer means, the early and late layers, the distance from 1.0) is defined here once; the
regime analysis (analysis_regime.py) reads it the same way."""
import math
import os
import sys

from analysis_common import COLOURS, Study, condition_effects, fmt, interval, paired, plt, verdict


def arm_name(study, r):
    base = os.path.basename(study.dir)
    if base == "routing-optimizer":
        return "OMN (Muon + AdamW)" if r["optimizer"] == "muon+adamw" else "AdamW everywhere"
    return {"routing-gain-lr-0.1": "gains' LR ×0.1", "routing-gain-lr-10": "gains' LR ×10",
            "routing-gain-wd": "weight decay 0.1 on gains", "depth-12": "12 layers", "length-5000": "5,000 steps"}.get(base, base)


def gain_summary(track_doc):
    """per checkpoint: step, and per layer the Q and K gains' mean, std, max; and the whole model's."""
    out = []
    for c in track_doc["checkpoints"]:
        out.append({"step": c["step"], "layers": c["layers"], "mean": c["statistics"]["mean"], "max": c["statistics"]["max"],
                    "std": c["statistics"]["std"], "negative": c["statistics"]["count_negative"]})
    return out


def layer_mean(c, li):
    """a checkpoint's (gain_summary) layer li: the mean of its Q and K gain means (equal counts)."""
    return (c["layers"][li]["q"]["mean"] + c["layers"][li]["k"]["mean"]) / 2


def early_mean(c):
    """the early layers' gain mean: layers 0-1, Q and K (OMN-1's regime lives there)."""
    return sum(layer_mean(c, li) for li in (0, 1)) / 2


def late_mean(c):
    """the late layers' gain mean: the last two layers, Q and K."""
    n = len(c["layers"])
    return sum(layer_mean(c, li) for li in (n - 2, n - 1)) / 2


def distance_from_one(c):
    """How far a checkpoint's gains are from 1.0 (where omn-audit initialises them): the furthest
    coordinate, max |g - 1| over every Q and K vector (from each vector's min and max), and the root mean
    square over every coordinate, sqrt(mean (g - 1)^2), from each vector's mean and population std
    (E(g - 1)^2 = std^2 + (mean - 1)^2; every Q and K vector has head_dim coordinates, checked: the
    vectors' statistics must give the checkpoint's whole-model mean and std)."""
    vecs = [l[role] for l in c["layers"] for role in ("q", "k")]
    m = sum(v["mean"] for v in vecs) / len(vecs)  # equal counts: the vectors' statistics give the model's
    sd = math.sqrt(sum(v["std"] ** 2 + (v["mean"] - m) ** 2 for v in vecs) / len(vecs))
    if abs(m - c["mean"]) > 1e-6 * abs(c["mean"]) or abs(sd - c["std"]) > 1e-6 * max(c["std"], 1e-3):
        sys.exit("analysis: the checkpoint at step %s: its Q/K vectors' statistics do not give its whole-model mean and std "
                 "(%.9g, %.9g; track: %.9g, %.9g): the vectors are not of equal size" % (c["step"], m, sd, c["mean"], c["std"]))
    return {"furthest": max(max(v["max"] - 1, 1 - v["min"]) for v in vecs),
            "rms": math.sqrt(sum(v["std"] ** 2 + (v["mean"] - 1) ** 2 for v in vecs) / len(vecs))}


def per_seed(runs, seeds, f):
    """f of each finished run, in the order of seeds (None where the seed has no finished run)."""
    d = {x["seed"]: f(x) for x in runs if x["status"] == "finished"}
    return [d.get(sd) for sd in seeds]


def collect_arms(studies, name=arm_name):
    """arm name → its runs, each with its held-out NLL, sweep effects, gain trajectory, and its study and
    run entry; name(study, run) names the arm."""
    arms = {}
    for s in studies:
        for r in s.runs:
            a = arms.setdefault(name(s, r), {"runs": []})
            sw = s.sweep(r)
            tr = s.track(r)
            a["runs"].append({"id": r["id"], "seed": r["seed"], "status": r["status"], "panel_loss": s.panel_loss(r),
                              "effects": condition_effects(sw) if sw else {}, "track": gain_summary(tr) if tr else [],
                              "study": s, "run": r})
    return arms


CONTROL_PREFIX = "routing-control-"  # a rerun of OMN's routing (the control) on another build or kernel


def provenance(study, r):
    """What a run trained on, from its train.json: the build (7 hex digits of its git revision), the CPU
    and the OpenBLAS kernel (the core name, second to last word of provenance.libraries.openblas)."""
    try:
        p = study.train(r).get("provenance", {})
    except FileNotFoundError:
        return {"build": None, "cpu": None, "kernel": None}
    words = str(p.get("libraries", {}).get("openblas") or "").split()
    host = p.get("host", {})
    return {"build": str(p.get("git_revision") or "")[:7] or None, "cpu": host.get("cpu") if isinstance(host, dict) else host,
            "kernel": words[-2] if len(words) >= 2 else None}


def match_controls(arm_runs, controls):
    """Each finished run of an arm paired with a finished control run of its seed that trained on the same
    build and OpenBLAS kernel (on the same CPU where one did; else the first such control, in the order
    given); where none did, the first control of the seed (the one trained with the arms: OMN's routing
    in routing-optimizer), marked same_build_kernel false. seed → (control run, record)."""
    out = {}
    for x in arm_runs:
        if x["status"] != "finished":
            continue
        cands = [c for c in controls if c["seed"] == x["seed"] and c["status"] == "finished"]
        if not cands:
            continue
        same = [c for c in cands if (c["prov"]["build"], c["prov"]["kernel"]) == (x["prov"]["build"], x["prov"]["kernel"])]
        same.sort(key=lambda c: c["prov"]["cpu"] != x["prov"]["cpu"])  # stable: the order given within each
        c = (same or cands)[0]
        out[x["seed"]] = (c, {"seed": x["seed"], "arm_run": x["id"], "arm_study": os.path.basename(x["study"].dir), "arm": x["prov"],
                               "control_run": c["id"], "control_study": os.path.basename(c["study"].dir), "control": c["prov"],
                               "same_build_kernel": bool(same), "same_cpu": c["prov"]["cpu"] == x["prov"]["cpu"]})
    return out


def routing(job):
    """Each arm − OMN's routing, paired by seed with a control run of the same build and OpenBLAS kernel:
    the control trained with the arms (routing-optimizer's Muon + AdamW arm) or its reruns (studies
    routing-control-*: the same settings on the build and kernel other arms trained on); a pair for which
    no such control exists is made with the original control and recorded as crossing builds or kernels
    (arms[NAME].pairing)."""
    studies = [Study(p) for p in job.study_paths]
    is_control = lambda s: os.path.basename(s.dir).startswith(CONTROL_PREFIX)  # noqa: E731
    arms = collect_arms([s for s in studies if not is_control(s)])
    reruns = collect_arms([s for s in studies if is_control(s)])  # study name → its runs
    ref = "OMN (Muon + AdamW)"
    for a in list(arms.values()) + list(reruns.values()):
        for x in a["runs"]:
            x["prov"] = provenance(x["study"], x["run"])
    controls = arms[ref]["runs"] + [x for a in reruns.values() for x in a["runs"]]
    seeds = sorted({x["seed"] for a in arms.values() for x in a["runs"]})
    by_seed = lambda a, f: per_seed(a["runs"], seeds, f)  # noqa: E731
    final_mean = lambda x: x["track"][-1]["mean"] if x["track"] else None
    final_max = lambda x: x["track"][-1]["max"] if x["track"] else None
    dep = lambda x: x["effects"].get("constant 1 qk all", {}).get("delta_nll")
    measures = (("panel_loss", lambda x: x["panel_loss"]), ("gain_mean", final_mean), ("gain_max", final_max), ("dependence", dep))
    table = {}
    for name, a in arms.items():
        t = {"panel_loss": interval(by_seed(a, lambda x: x["panel_loss"])), "gain_mean": interval(by_seed(a, final_mean)),
             "gain_max": interval(by_seed(a, final_max)), "dependence": interval(by_seed(a, dep))}
        if name != ref:
            match = match_controls(a["runs"], controls)
            for k, f in measures:
                t["vs_omn_" + k] = interval(paired(by_seed(a, f), [f(match[sd][0]) if sd in match else None for sd in seeds]))
            t["pairing"] = [match[sd][1] for sd in seeds if sd in match]
        table[name] = t
    # the control itself on each build and kernel: a rerun − the original, paired by seed (what a build or
    # kernel alone moves), and the reruns' own values
    control_reruns = {}
    for name, a in reruns.items():
        t = {k: interval(by_seed(a, f)) for k, f in measures}
        for k, f in measures:
            t["vs_original_" + k] = interval(paired(by_seed(a, f), by_seed(arms[ref], f)))
        t["provenance"] = [dict(x["prov"], seed=x["seed"], run=x["id"]) for x in a["runs"]]
        t["original_provenance"] = [dict(x["prov"], seed=x["seed"], run=x["id"]) for x in arms[ref]["runs"]]
        control_reruns[name] = t
    analysis = {"experiment": job.experiment, "studies": job.study_paths, "seeds": seeds, "arms": table,
                "control_reruns": control_reruns,
                "trajectories": {n: [x["track"] for x in a["runs"]] for n, a in arms.items()},
                "compute": job.compute_note(studies)}
    job.mark_partial(studies)
    names = list(arms)
    n_layers = len(next(x for a in arms.values() for x in a["runs"] if x["track"])["track"][0]["layers"])
    fig, axes = plt.subplots(2, n_layers, figsize=(2.6 * n_layers, 5.2), sharex=True, sharey="row")
    for i, name in enumerate(names):
        for li in range(n_layers):
            for row, stat in enumerate(("mean", "max")):
                ax = axes[row][li]
                for j, x in enumerate(arms[name]["runs"]):
                    if not x["track"]:
                        continue
                    steps = [c["step"] for c in x["track"]]
                    vals = [(c["layers"][li]["q"][stat] + c["layers"][li]["k"][stat]) / 2 if stat == "mean"
                            else max(c["layers"][li]["q"][stat], c["layers"][li]["k"][stat]) for c in x["track"]]
                    ax.plot(steps, vals, color=COLOURS[i], lw=1.2, alpha=0.85, label=name if (li == 0 and row == 0 and j == 0) else None)
                ax.set_title("layer %d: %s" % (li, "Q/K gain mean" if stat == "mean" else "largest Q/K gain"), fontsize=8)
                if row == 1:
                    ax.set_xlabel("step")
    fig.legend(loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    analysis["figure"] = job.save(fig, analysis["compute"])
    md = ["## %s: which factor moves the gains, which moves the dependence\n" % job.experiment,
          "Every arm: the tiny model, QK-norm on, 1,000 steps, seeds %s. Gains at the end: the mean and the largest of all Q/K "
          "gains (`track` of final.pt); dependence: ΔNLL when every Q/K gain is set to 1.0 after training, on the held-out "
          "panel. Differences from OMN's routing are paired by seed (95 %% t-interval).\n" % seeds,
          "| arm | held-out NLL | gain mean | largest gain | dependence (gains → 1.0) |", "|---|---:|---:|---:|---:|"]
    for name, t in table.items():
        md.append("| %s | %s | %s | %s | %s |" % (name, fmt(t["panel_loss"]), fmt(t["gain_mean"], 3), fmt(t["gain_max"], 3), fmt(t["dependence"], sign=True)))
    md += ["", "| arm − OMN | held-out NLL | gain mean | largest gain | dependence | compared with (OMN control: build, kernel; seeds) |",
           "|---|---:|---:|---:|---:|---|"]
    for name, t in table.items():
        if name == ref:
            continue
        md.append("| %s | %s | %s | %s | %s | %s |" % (name, *(fmt(t["vs_omn_" + k], 4 if k in ("panel_loss", "dependence") else 3, True)
                                                            for k in ("panel_loss", "gain_mean", "gain_max", "dependence")),
                                                     pairing_text(t["pairing"])))
    md += ["", "Each arm's run is paired with the OMN control of its seed trained on the same build and OpenBLAS kernel "
           "(`%s`, or `%s*`, its reruns); **crosses** marks a pair for which no such control is in the store (the original "
           "control stands in)." % ("routing-optimizer", CONTROL_PREFIX)]
    if control_reruns:
        md += ["", "The control itself, rerun (rerun − original, paired by seed: what the build or kernel alone moves):", "",
               "| rerun | build, kernel | held-out NLL | gain mean | largest gain | dependence |", "|---|---|---:|---:|---:|---:|"]
        for name, t in control_reruns.items():
            md.append("| %s | %s | %s | %s | %s | %s |" % (name, provenance_text(t["provenance"]) + " vs " + provenance_text(t["original_provenance"]),
                                                           *(fmt(t["vs_original_" + k], 4 if k in ("panel_loss", "dependence") else 3, True)
                                                             for k in ("panel_loss", "gain_mean", "gain_max", "dependence"))))
    md += ["", "Read (from the intervals above):", ""]
    for name, t in table.items():
        if name == ref:
            continue
        md.append("- **%s**: %s; %s; %s." % (name, verdict(t["vs_omn_gain_mean"], "mean gain"),
                                               verdict(t["vs_omn_gain_max"], "largest gain"),
                                               verdict(t["vs_omn_dependence"], "dependence on the gains")))
    comp = analysis["compute"]
    md += ["", "Compute: %.2f h of training, %.2f h of sweeps.%s" % (comp["training_seconds"] / 3600, comp["sweep_seconds"] / 3600,
                                                                 job.cut_text(comp)), "",
           "![%s](../figures/experiments/%s.svg)" % (job.experiment, job.experiment), ""]
    job.write(analysis, "\n".join(md))


def provenance_text(provs):
    """'9a38267 Haswell' (or each distinct build and kernel with its seeds)"""
    groups = {}
    for p in provs:
        groups.setdefault("%s %s" % (p["build"], p["kernel"]), []).append(p["seed"])
    return "; ".join(k if len(groups) == 1 else "%s (seed %s)" % (k, ", ".join(map(str, v))) for k, v in groups.items())


def pairing_text(pairing):
    """'routing-control-haswell: 9a38267 Haswell (seeds 0, 1); ...', crossing pairs marked"""
    groups = {}
    for q in pairing:
        key = (q["control_study"], q["control"]["build"], q["control"]["kernel"], q["same_build_kernel"],
               None if q["same_build_kernel"] else "%s %s" % (q["arm"]["build"], q["arm"]["kernel"]))
        groups.setdefault(key, []).append(q["seed"])
    return "; ".join("`%s`: %s %s (seed%s %s)%s" % (st, b, k, "s" if len(sd) > 1 else "", ", ".join(map(str, sd)),
                                                  "" if same else " **crosses**: the arm ran on %s" % arm)
                     for (st, b, k, same, arm), sd in groups.items())


# --- experiment 4: depth and length --------------------------------------------------------------
def depth(job):
    studies = [Study(p) for p in job.study_paths]
    arms = collect_arms(studies)
    seeds = sorted({x["seed"] for a in arms.values() for x in a["runs"]})
    table, fig = {}, plt.figure(figsize=(10, 4))
    axes = fig.subplots(1, len(arms))
    if len(arms) == 1:
        axes = [axes]
    for i, (name, a) in enumerate(arms.items()):
        done = [x for x in a["runs"] if x["status"] == "finished" and x["track"]]
        finals = [x["track"][-1] for x in done]
        n_layers = len(finals[0]["layers"])
        table[name] = {"layers": n_layers, "early_mean": interval([early_mean(c) for c in finals]),
                       "late_mean": interval([late_mean(c) for c in finals]),
                       "early_over_late": interval([early_mean(c) / late_mean(c) for c in finals]), "max": interval([c["max"] for c in finals]),
                       "negative": [c["negative"] for c in finals], "panel_loss": interval([x["panel_loss"] for x in done]),
                       "dependence": interval([x["effects"].get("constant 1 qk all", {}).get("delta_nll") for x in done]),
                       "not_finished": [x["id"] for x in a["runs"] if x["status"] != "finished"]}
        ax = axes[i]
        for j, x in enumerate(done):
            c = x["track"][-1]
            ax.plot(range(n_layers), [l["q"]["mean"] for l in c["layers"]], color=COLOURS[0], marker="o", ms=3, lw=1, alpha=0.8,
                    label="Q gain mean" if j == 0 else None)
            ax.plot(range(n_layers), [l["k"]["mean"] for l in c["layers"]], color=COLOURS[1], marker="s", ms=3, lw=1, alpha=0.8,
                    label="K gain mean" if j == 0 else None)
            ax.plot(range(n_layers), [max(l["q"]["max"], l["k"]["max"]) for l in c["layers"]], color=COLOURS[6], ls=":", lw=1,
                    label="largest Q/K gain" if j == 0 else None)
        ax.set_title("%s\nper-layer gains at the end, %d seeds" % (name, len(done)), fontsize=9)
        ax.set_xlabel("layer")
        ax.set_xticks(range(n_layers))
        ax.legend(fontsize=8, frameon=False)
    axes[0].set_ylabel("gain")
    fig.tight_layout()
    comp = job.compute_note(studies)
    analysis = {"experiment": job.experiment, "studies": job.study_paths, "seeds": seeds, "arms": table, "compute": comp,
                "figure": job.save(fig, comp)}
    md = ["## %s: does an early-layer regime appear with depth or length?\n" % job.experiment,
          "OMN-1 (the audit): Q/K gain means near 25 in layers 0-1 and near 2 by layer 27 (early/late ≈ 12), maxima 68.5, five "
          "negative coordinates. Here, QK-norm on, OMN's routing, seeds %s; gains of final.pt (`track`); early = layers 0-1, "
          "late = the last two; dependence = ΔNLL with every Q/K gain → 1.0 on the held-out panel.\n" % seeds,
          "| model | early-layer gain mean | late-layer gain mean | early / late | largest gain | negative gains | held-out NLL | dependence |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, t in table.items():
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (name, fmt(t["early_mean"], 3), fmt(t["late_mean"], 3), fmt(t["early_over_late"], 3),
                  fmt(t["max"], 3), ", ".join(map(str, t["negative"])), fmt(t["panel_loss"]), fmt(t["dependence"], sign=True)))
    comp = analysis["compute"]
    md += ["", "Compute: %.2f h of training, %.2f h of sweeps.%s" % (comp["training_seconds"] / 3600, comp["sweep_seconds"] / 3600,
                                                                 job.cut_text(comp)), "",
           "![%s](../figures/experiments/%s.svg)" % (job.experiment, job.experiment), ""]
    job.write(analysis, "\n".join(md))
