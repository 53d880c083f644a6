#!/usr/bin/python3
"""The analysis of one of issue 29's experiments, from the raw documents alone:

  analyse.py ablation|routing|depth|regime|qk-lr EXPERIMENT STUDY_JSON... [--equivalence STUDY_JSON...]
             [--compare-with OTHER_EXPERIMENT STUDY_JSON...]

(an ablation's pre-registered equivalence test reads the studies after --equivalence as more seeds,
and --compare-with sets another ablation's grid beside this one; the runner passes both from
configs/experiments.json)

Reads each study document (the merged cells in the store, results/STUDY/study.json), its runs'
train.json (through the study) and what after_training.py wrote (STUDY_DIR/after/: eval, sweep, track
documents), and writes
  results/EXPERIMENT/analysis.json       every number below, with the inputs' paths
  docs/experiments/EXPERIMENT.md         the tables (generated: do not edit)
  docs/figures/experiments/EXPERIMENT.svg   the figure
Intervals over seeds are Student-t on the per-seed values (paired by seed where the comparison is:
the same seed gives two arms the same initial weights and batch order); intervals of one model are the
paired bootstrap of omn-audit intervene (over the panel's rows). A difference whose interval contains
0 is reported as no measurable difference.
OMN_ANALYSIS_PARTIAL=1: an analysis of the cells published so far, marked partial and written under
OMN_ANALYSIS_PARTIAL_OUT (default /tmp/omn-analysis-partial), never into results/ or docs/
(analysis_common.py); the runner analyses only complete experiments.
"""
import sys

from analysis_ablation import ablation
from analysis_common import Job
from analysis_gains import depth, routing
from analysis_qk_lr import qk_lr
from analysis_regime import regime

kinds = {"ablation": ablation, "routing": routing, "depth": depth, "regime": regime, "qk-lr": qk_lr}
usage = "usage: analyse.py %s EXPERIMENT STUDY_JSON... [--equivalence STUDY_JSON...] [--compare-with EXPERIMENT STUDY_JSON...]" % "|".join(kinds)
if len(sys.argv) < 4 or sys.argv[1] not in kinds:
    sys.exit(usage)
parts, at = {"": []}, ""
for a in sys.argv[3:]:
    if a in ("--equivalence", "--compare-with"):
        if a in parts:
            sys.exit("analyse.py: %s given twice\n%s" % (a, usage))
        parts[a], at = [], a
    else:
        parts[at].append(a)
if not parts[""] or parts.get("--equivalence") == [] or parts.get("--compare-with", ["x", "y"])[1:] == []:
    sys.exit(usage)
compare = (parts["--compare-with"][0], parts["--compare-with"][1:]) if "--compare-with" in parts else None
if sys.argv[1] != "ablation" and len(parts) > 1:
    sys.exit("analyse.py: --equivalence and --compare-with are an ablation's, not %s's\n%s" % (sys.argv[1], usage))
job = Job(sys.argv[1], sys.argv[2], parts[""], parts.get("--equivalence", []), compare)
kinds[job.kind](job)
