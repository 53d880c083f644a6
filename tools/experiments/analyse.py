#!/usr/bin/python3
"""The analysis of one of issue 29's experiments, from the raw documents alone:

  analyse.py ablation|routing|depth|regime|qk-lr EXPERIMENT STUDY_JSON...

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
if len(sys.argv) < 4 or sys.argv[1] not in kinds:
    sys.exit("usage: analyse.py %s EXPERIMENT STUDY_JSON..." % "|".join(kinds))
job = Job(sys.argv[1], sys.argv[2], sys.argv[3:])
kinds[job.kind](job)
