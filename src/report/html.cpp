#include "omn/report/html.h"

#include <cstdio>
#include <regex>
#include <sstream>

#include "omn/intervene/results.h"
#include "omn/io/terminal_text.h"
#include "omn/report/profile_text.h"
#include "omn/report/svg.h"
#include "chart.h"
#include "grid.h"
#include "run_sections.h"
#include "omn/output/table.h"

namespace omn::report {
using output::fixed;
using output::general;
using output::significant;
using output::ciLabel;


using nlohmann::json;

namespace {

// A manifest's bytes in a fenced block: its lines and tabs kept (CRLF read as a line break), every
// other control character escaped (a lone CR too), and a fence longer than any run of backticks in it.
std::string markdownCodeBlock(const std::string& text) {
  std::string body, piece;
  std::size_t run = 0, longest = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '\r' && (i + 1 == text.size() || text[i + 1] == '\n')) continue;  // CRLF, or a last line's CR
    if (c == '\n' || c == '\t') {
      body += io::terminalSafe(piece) + c;
      piece.clear();
    } else {
      piece += c;
    }
  }
  body += io::terminalSafe(piece);
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fence + "json\n" + body + "\n" + fence + "\n";
}

Grid sweepGrid(const json& r) {
  const json& ctl = r["control"]["open"]["result"];
  const bool kl = r.value("kl", false);  // --kl: the distributions against the control's
  const std::string ci = ciLabel(ctl["perplexity_ci"]["confidence"].get<double>());
  Grid g{{"id", "condition", "perplexity (exp nats/token)", "perplexity " + ci, "ratio vs control (×)", "ratio " + ci + " (×)",
          "ΔNLL/token (nats)", "touched (tensors)", "restore"},
         {}};
  if (kl) g.head.insert(g.head.end(), {"KL/token (nats)", "top-1 agreement (share)"});
  g.rows.push_back({"control", intervene::kControlLabel, f(ctl["perplexity"], 3),
                    "[" + f(ctl["perplexity_ci"]["low"], 3) + ", " + f(ctl["perplexity_ci"]["high"], 3) + "]", "1", "", "0", "", ""});
  if (kl) g.rows.back().insert(g.rows.back().end(), {"0", "1"});
  for (const auto& c : r["conditions"]) {
    const json& q = c["vs_control"]["ppl_ratio"];
    const json& d = c["vs_control"]["delta_nll_per_token"];
    g.rows.push_back({c["id"], c["label"], f(c["result"]["perplexity"], 3),
                      "[" + f(c["result"]["perplexity_ci"]["low"], 3) + ", " + f(c["result"]["perplexity_ci"]["high"], 3) + "]",
                      f(q["estimate"], 4), "[" + f(q["low"], 4) + ", " + f(q["high"], 4) + "]", f(d["estimate"], 5),
                      std::to_string(c["touched"].size()), c["restore"]["ok"].get<bool>() ? "bitwise" : "FAILED"});
    if (kl) {
      const json dv = c["vs_control"].value("divergence", json());
      g.rows.back().insert(g.rows.back().end(),
                           {dv.is_object() && dv["kl_per_token"].is_number() ? significant(dv["kl_per_token"].get<double>(), 3) : "—",
                            dv.is_object() ? f(dv["top1_agreement"], 4) : "—"});
    }
  }
  return g;
}

bool hasReported(const json& r) {
  if (!r.contains("reported")) return false;
  for (const auto& c : r["conditions"])
    if (c.contains("reported")) return true;
  return false;
}

// Values reported elsewhere (the historical record) beside the ones measured here, each labelled as
// what it is: a reported number is quoted, never recomputed; a measured one comes from this run.
Grid reportedGrid(const json& r) {
  const json& ctl = r["control"]["open"]["result"];
  const std::string ci = ciLabel(ctl["perplexity_ci"]["confidence"].get<double>());
  Grid g{{"id", "condition", "reported perplexity", "reported ratio (×)", "measured perplexity", "measured " + ci, "measured ratio (×)",
          "measured ratio " + ci + " (×)"},
         {}};
  const json& rc = r["reported"]["control_perplexity"];
  g.rows.push_back({"control", intervene::kControlLabel, rc.is_number() ? f(rc, 2) : "—", rc.is_number() ? "1" : "—", f(ctl["perplexity"], 3),
                    "[" + f(ctl["perplexity_ci"]["low"], 3) + ", " + f(ctl["perplexity_ci"]["high"], 3) + "]", "1", ""});
  for (const auto& c : r["conditions"]) {
    if (!c.contains("reported")) continue;
    const json& q = c["vs_control"]["ppl_ratio"];
    const json& rr = c["reported"]["ratio_to_reported_control"];
    g.rows.push_back({c["id"], c["label"], f(c["reported"]["perplexity"], 2), rr.is_number() ? fixed(rr.get<double>(), 2) + "×" : "—",
                      f(c["result"]["perplexity"], 3),
                      "[" + f(c["result"]["perplexity_ci"]["low"], 3) + ", " + f(c["result"]["perplexity_ci"]["high"], 3) + "]",
                      f(q["estimate"], 4) + "×", "[" + f(q["low"], 4) + ", " + f(q["high"], 4) + "]"});
  }
  return g;
}

std::string reportedNote(const json& r) {
  return "Reported: quoted from " + r["reported"]["source"].get<std::string>() +
         ", not recomputed (no raw data). Measured: this run, recomputable from the raw per-sequence values in the result. "
         "Ratios are each against their own control.";
}

Grid evalGrid(const json& r) {
  Grid g{{"group", "first sequence (index)", "sequences (count)", "tokens (count)", "perplexity (exp nats/token)"}, {}};
  for (std::size_t i = 0; i < r["result"]["groups"].size(); ++i) {
    const json& x = r["result"]["groups"][i];
    g.rows.push_back({std::to_string(i), x["first"].dump(), x["count"].dump(), x["tokens"].dump(), f(x["perplexity"], 4)});
  }
  return g;
}

Grid profileSummary(const json& p) {
  const json& s = p["statistics"];
  Grid g{{"statistic", "value"},
          {{"gain elements (count)", s["count"].dump()},
           {"mean (×)", f(s["mean"], 6)},
           {"population std (×)", f(s["std"], 6)},
           {"min (×)", f(s["min"], 6)},
           {"max (×)", f(s["max"], 6)},
           {"negative coordinates (count)", s["count_negative"].dump()}}};
  if (chart::drawsThreshold(p))  // OMN-1's audit figure, or a threshold someone chose
    g.rows.push_back({"share above " + general(p["options"]["threshold"].get<double>()) + " (%)",
                      s["share_above_threshold"].is_null() ? std::string("NaN") : fixed(100 * s["share_above_threshold"].get<double>(), 4)});
  for (const auto& [label, count] : countRows(s)) g.rows.push_back({"in " + label + " (count)", std::to_string(count)});
  return g;
}

Grid profileLayers(const json& p) {
  Grid g{{"layer", "Q mean (×)", "Q min (×)", "Q max (×)", "K mean (×)", "K min (×)", "K max (×)", "Q − K (×)"}, {}};
  for (const auto& l : p["layers"])
    g.rows.push_back({l["layer"].dump(), f(l["q"]["mean"], 3), f(l["q"]["min"], 3), f(l["q"]["max"], 3), f(l["k"]["mean"], 3),
                      f(l["k"]["min"], 3), f(l["k"]["max"], 3), f(l["q_minus_k"], 3)});
  return g;
}


// a learning rate and the like: three significant digits, "—" for none
std::string sci(const json& v) { return v.is_number() ? significant(v.get<double>(), 3) : "—"; }

// why an arm has no LR sensitivity; a study written before the reason was recorded has none
std::string noteOf(const json& arm) {
  const json& n = arm.value("lr_sensitivity_note", json());
  return n.is_string() ? n.get<std::string>() : "reason not recorded";
}

Grid studyArmsGrid(const json& s) {
  Grid g{{"arm", "runs (count)", "diverged (count)", "LR sensitivity (nats)", "largest stable LR", "best LR", "best held-out loss (nats)", "seed sd (nats)"}, {}};
  for (const auto& a : s["arms"])
    g.rows.push_back({a["arm"].get<std::string>(), a["runs"].dump(), a["diverged"].dump(),
                      a["lr_sensitivity"].is_null() ? "— (" + noteOf(a) + ")" : f(a["lr_sensitivity"], 4),
                      sci(a["largest_stable_lr"]), sci(a["best_lr"]), a["best_loss"].is_null() ? "—" : f(a["best_loss"], 4),
                      a["seed_spread"].is_null() ? "—" : f(a["seed_spread"], 4)});
  return g;
}

Grid studyComparisonGrid(const json& s) {
  Grid g{{"learning rate", "arms", "pairs (count)", "held-out loss on − off (nats)", ciLabel(s["confidence"].get<double>()) + " (nats)", "diverged on / off (count)"}, {}};
  for (const auto& c : s["comparison"])
    for (const auto& p : c["per_lr"]) {
      const json& d = p["difference"];
      g.rows.push_back({sci(p["lr"]), c["on"].get<std::string>() + " − " + c["off"].get<std::string>(), d["n"].dump(),
                        d["mean"].is_null() ? "—" : f(d["mean"], 4),
                        d["ci_low"].is_null() ? "—" : "[" + f(d["ci_low"], 4) + ", " + f(d["ci_high"], 4) + "]",
                        p["diverged"]["on"].dump() + " / " + p["diverged"]["off"].dump()});
    }
  return g;
}

bool isStudy(const json& r) { return !r.is_null() && r.value("schema", "") == "omn-audit/study@1"; }

// The findings a reader looks for first, one row each, from the documents alone: for a sweep the
// control and how many conditions the paired interval resolves, the largest and the smallest
// change; for a study each arm's best LR and loss; for a profile the gains' range.
Grid summaryGrid(const ReportInput& in) {
  Grid g{{"finding", "value"}, {}};
  const json& r = in.result;
  if (!r.is_null() && r.value("schema", "") == "omn-audit/intervention@1") {
    const json& ctl = r["control"]["open"]["result"];
    const std::string ci = ciLabel(ctl["perplexity_ci"]["confidence"].get<double>());
    g.rows.push_back({"control perplexity", f(ctl["perplexity"], 3) + " [" + f(ctl["perplexity_ci"]["low"], 3) + ", " +
                                                f(ctl["perplexity_ci"]["high"], 3) + "] (" + ci + " over sequences)"});
    std::size_t resolved = 0, n = 0;
    const json* hi = nullptr;
    const json* lo = nullptr;
    for (const auto& c : r["conditions"]) {
      const json& q = c["vs_control"]["ppl_ratio"];
      if (!q["estimate"].is_number()) continue;
      ++n;
      if (q["low"].is_number() && q["high"].is_number() && (q["low"].get<double>() > 1 || q["high"].get<double>() < 1)) ++resolved;
      const double e = std::fabs(std::log(q["estimate"].get<double>()));
      if (!hi || e > std::fabs(std::log((*hi)["vs_control"]["ppl_ratio"]["estimate"].get<double>()))) hi = &c;
      if (!lo || e < std::fabs(std::log((*lo)["vs_control"]["ppl_ratio"]["estimate"].get<double>()))) lo = &c;
    }
    g.rows.push_back({"conditions whose paired " + ci + " of the ratio excludes 1", std::to_string(resolved) + " of " + std::to_string(n)});
    auto cond = [&](const json& c) {
      const json& q = c["vs_control"]["ppl_ratio"];
      return c["id"].get<std::string>() + " " + c["label"].get<std::string>() + ": ×" + f(q["estimate"], 4) + " [" + f(q["low"], 4) +
             ", " + f(q["high"], 4) + "]";
    };
    if (hi) g.rows.push_back({"largest change", cond(*hi)});
    if (lo && lo != hi) g.rows.push_back({"smallest change", cond(*lo)});
  } else if (isStudy(r)) {
    for (const auto& a : r["arms"])
      g.rows.push_back({"arm " + a["arm"].get<std::string>() + ": best LR, held-out loss",
                        sci(a["best_lr"]) + ", " + (a["best_loss"].is_null() ? std::string("—") : f(a["best_loss"], 4)) + " (" +
                            a["diverged"].dump() + " of " + a["runs"].dump() + " runs diverged)"});
  } else if (!r.is_null()) {
    g.rows.push_back({"perplexity", f(r["result"]["perplexity"], 4) + " [" + f(r["result"]["perplexity_ci"]["low"], 4) + ", " +
                                        f(r["result"]["perplexity_ci"]["high"], 4) + "]"});
  }
  if (!in.track.is_null()) trackSummaryRows(g, in.track);
  if (!in.run.is_null()) runSummaryRows(g, in.run);
  if (!in.profile.is_null()) {
    const json& st = in.profile["statistics"];
    if (st["max"].is_number())
      g.rows.push_back({"Q/K gains", st["count"].dump() + " values, mean " + f(st["mean"], 4) + ", range [" + f(st["min"], 4) + ", " +
                                         f(st["max"], 4) + "], " + st["count_negative"].dump() + " negative"});
  }
  return g;
}

// The manifest exactly as the run read it: a sweep records its bytes, a study its text; a result from
// before either was recorded falls back to the parsed document (and says so).
std::string manifestText(const json& r) {
  const json& b = r["manifest"].value("bytes", json());
  if (b.is_string() && !b.get<std::string>().empty()) return b.get<std::string>();
  const json& v = r["manifest"]["verbatim"];
  return v.is_string() ? v.get<std::string>() : "(the result does not record the manifest's bytes; its parsed form:)\n" + v.dump(2);
}

Grid provenanceGrid(const json& doc) {
  const json& pv = doc["provenance"];
  Grid g{{"field", "value"}, {}};
  for (const char* k : {"tool", "version", "git_revision", "model_code_fingerprint", "libtorch", "device", "host_threads",
                        "started_utc", "finished_utc"})
    if (pv.contains(k)) g.rows.push_back({k, pv[k].is_string() ? pv[k].get<std::string>() : pv[k].dump()});
  for (const auto& in : pv["inputs"])  // (a track's checkpoint read without hashing has no digest)
    g.rows.push_back({"input: " + in["role"].get<std::string>(),
                      in["path"].get<std::string>() + (in["sha256"].is_string() ? "  sha256 " + in["sha256"].get<std::string>() : "  (not hashed)") +
                          (in.value("verified", false) ? "  (verified)" : "  (not verified)")});
  if (doc.contains("tokens")) {
    const json& rev = doc["tokens"]["tokenizer_revision"];
    g.rows.push_back({"tokenizer revision", rev.is_string() ? rev.get<std::string>() : "unknown (not recorded)"});
  }
  if (doc.contains("model") && doc["model"].contains("attention"))
    g.rows.push_back({"model", doc["model"]["config"]["preset"].get<std::string>() + ", " + doc["model"]["attention"].get<std::string>() +
                                   " attention, " + doc["model"]["dtype"].get<std::string>() + ", " + doc["model"]["device"].get<std::string>()});
  if (doc.contains("selection"))
    g.rows.push_back({"rows", doc["selection"]["num_seqs"].dump() + " × " + doc["selection"]["seq_len"].dump() + " tokens, " +
                                  doc["selection"]["row_form"].get<std::string>() + ", " + doc["selection"]["mode"].get<std::string>()});
  return g;
}

const char* kCss =
    "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px}"
    "th{background:#f0f0f0}td{text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".warn{background:#fff3cd;border:1px solid #e0c060;padding:8px 12px;margin:6px 0}"
    ".ok{background:#e8f5e9;border:1px solid #9c9;padding:8px 12px;margin:6px 0}"
    "figure{margin:16px 0}figcaption{font-size:12px;color:#555;max-width:760px}"
    "figure svg{max-width:100%;height:auto}nav{font-size:13px;margin:8px 0}nav a{margin-right:12px}"
    "table{display:block;overflow-x:auto;max-width:100%}"
    "pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;font-size:11px;white-space:pre-wrap;overflow-wrap:anywhere}";

}  // namespace

std::vector<std::string> reportWarnings(const ReportInput& in) {
  std::vector<std::string> w;
  const json& r = in.result;
  for (const json* d : {&in.result, &in.profile}) {
    if (d->is_null()) continue;
    for (const auto& i : (*d)["provenance"]["inputs"])
      if (i["role"] == "checkpoint" && !i["verified"].get<bool>())
        w.push_back("The checkpoint " + i["path"].get<std::string>() + " was not verified against an expected SHA-256.");
  }
  if (!r.is_null() && r.value("schema", "") == "omn-audit/intervention@1") {
    if (!r["control"]["reproduced_bitwise"].get<bool>())
      w.push_back("The closing control differs from the opening one (largest NLL difference " +
                  general(r["control"]["max_abs_nll_difference"].get<double>()) + ").");
    for (const auto& c : r["conditions"]) {
      if (c["result"]["non_finite"].get<bool>()) w.push_back("Condition " + c["id"].get<std::string>() + " (" + c["label"].get<std::string>() + ") has a non-finite perplexity.");
      if (!c["restore"]["ok"].get<bool>()) w.push_back("Condition " + c["id"].get<std::string>() + ": the gains did not restore bitwise.");
      if (c["vs_control"].value("below_noise_floor", false) && r.contains("noise_floor"))
        w.push_back("Condition " + c["id"].get<std::string>() + " (" + c["label"].get<std::string>() + "): its |ΔNLL| is below the noise floor of " +
                    general(r["noise_floor"]["nats_per_token"].get<double>()) + " nats/token (" +
                    r["noise_floor"]["basis"].get<std::string>() + "): confirm it in fp32 before reading it as an effect.");
    }
  }
  if (!r.is_null() && r.contains("shard") && r["shard"].is_object() && r["shard"].value("index", json()).is_number_integer() &&
      r["shard"].value("count", json()).is_number_integer())
    w.push_back("This is shard " + r["shard"]["index"].dump() + " of " + r["shard"]["count"].dump() + " (--shard " + r["shard"]["index"].dump() +
                "/" + r["shard"]["count"].dump() + "): it holds only its share of the " + (isStudy(r) ? "runs" : "conditions") +
                "; merge every shard (omn-audit merge) for the whole " + (isStudy(r) ? "study." : "sweep."));
  if (!r.is_null() && r.contains("tokens") && !r["tokens"]["tokenizer_revision"].is_string())
    w.push_back("The tokenizer revision was not recorded (eval without --tokenizer-revision): the token set's meaning rests on "
                "its SHA-256 alone; not the reproduction standard.");
  if (!r.is_null() && r.contains("selection") && r["selection"]["row_form"] == "historical")
    w.push_back("Rows in the historical form (EOS stripped, no document metadata): comparable with the historical record, "
                "but only a held-out set gives a publishable estimate.");
  if (isStudy(r))
    for (const auto& a : r["arms"])
      if (!a["complete"].get<bool>())
        w.push_back("Arm " + a["arm"].get<std::string>() + " is incomplete: not every learning rate has a run for every seed.");
  if (!in.track.is_null() && in.track["summary"]["unverified"].get<long long>() > 0)
    w.push_back(in.track["summary"]["unverified"].dump() + " of " + in.track["summary"]["checkpoints"].dump() +
                " tracked checkpoints were read without hashing (track --digests, or a run's train.json, verifies them).");
  if (!in.run.is_null() && in.run["diverged"].get<bool>()) w.push_back("The training run diverged: " + in.run["divergence"].dump() + ".");
  else if (!in.run.is_null() && in.run["status"] != "finished")
    w.push_back("The training run is " + in.run["status"].get<std::string>() + ", not finished: " + in.run["steps_done"].dump() + " of " +
                in.run["steps"].dump() + " steps.");
  if (!in.profile.is_null() && !r.is_null() && r.contains("checkpoint") &&
      in.profile["checkpoint"]["sha256"] != r["checkpoint"]["sha256"])
    w.push_back("The profile and the result come from different checkpoints.");
  return w;
}

std::vector<Figure> reportFigures(const ReportInput& in) {
  std::vector<Figure> figs;
  if (!in.result.is_null() && in.result.value("schema", "") == "omn-audit/intervention@1")
    for (auto& f : sweepFigures(in.result)) figs.push_back(std::move(f));
  if (isStudy(in.result))
    for (auto& f : studyFigures(in.result)) figs.push_back(std::move(f));
  if (!in.track.is_null())
    for (auto& f : trackFigures(in.track)) figs.push_back(std::move(f));
  if (!in.run.is_null())
    for (auto& f : runFigures(in.run, in.run_log)) figs.push_back(std::move(f));
  if (!in.profile.is_null())
    for (auto& f : profileFigures(in.profile)) figs.push_back(std::move(f));
  return figs;
}

std::string htmlReport(const ReportInput& in) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>omn-audit report</title><style>"
    << kCss << "</style></head><body>\n<h1>omn-audit report</h1>\n";
  const json& res = in.result;
  const bool sweep = !res.is_null() && res.value("schema", "") == "omn-audit/intervention@1";
  o << "<nav><a href=\"#summary\">Summary</a><a href=\"#figures\">Figures</a>"
    << (sweep ? "<a href=\"#sweep\">Sweep</a>" : isStudy(res) ? "<a href=\"#study\">Study</a>" : !res.is_null() ? "<a href=\"#evaluation\">Evaluation</a>" : "")
    << (in.track.is_null() ? "" : "<a href=\"#track\">Track</a>") << (in.run.is_null() ? "" : "<a href=\"#run\">Training run</a>")
    << (in.profile.is_null() ? "" : "<a href=\"#profile\">Profile</a>") << "<a href=\"#provenance\">Provenance</a></nav>\n";
  const auto warnings = reportWarnings(in);
  if (warnings.empty()) o << "<div class=\"ok\">No warnings: inputs verified, controls reproduced, restores bitwise.</div>\n";
  for (const auto& w : warnings) o << "<div class=\"warn\">⚠ " << xmlEscape(w) << "</div>\n";
  o << "<h2 id=\"summary\">Summary</h2>\n" << summaryGrid(in).html();
  o << "<h2 id=\"figures\">Figures</h2>\n";
  for (const auto& f : reportFigures(in))
    o << "<figure>" << f.svg << "</figure>\n";  // the caption is inside the SVG: it travels with the figure
  const json& r = in.result;
  if (!r.is_null() && r.value("schema", "") == "omn-audit/intervention@1") {
    o << "<h2 id=\"sweep\">Sweep</h2>\n" << sweepGrid(r).html();
    if (hasReported(r))
      o << "<h2>Reported against measured</h2>\n<p>" << xmlEscape(reportedNote(r)) << "</p>\n" << reportedGrid(r).html();
  } else if (isStudy(r)) {
    o << "<h2 id=\"study\">Study: arms</h2>\n" << studyArmsGrid(r).html() << "<h2>Study: QK-norm on − off, paired by seed</h2>\n"
      << studyComparisonGrid(r).html();
  } else if (!r.is_null()) {
    o << "<h2 id=\"evaluation\">Evaluation</h2>\n<p>perplexity " << f(r["result"]["perplexity"], 4) << " [" << f(r["result"]["perplexity_ci"]["low"], 4)
      << ", " << f(r["result"]["perplexity_ci"]["high"], 4) << "] over " << r["result"]["tokens"] << " tokens</p>\n"
      << evalGrid(r).html();
  }
  if (!in.track.is_null()) o << "<h2 id=\"track\">Track: Q/K gains over checkpoints</h2>\n" << trackGrid(in.track).html();
  if (!in.run.is_null())
    o << "<h2 id=\"run\">Training run</h2>\n" << runGrid(in.run).html() << "<h3>Held-out evaluations</h3>\n" << runEvalsGrid(in.run).html();
  if (!in.profile.is_null()) o << "<h2 id=\"profile\">Q/K gain profile</h2>\n" << profileSummary(in.profile).html() << profileLayers(in.profile).html();
  o << "<h2 id=\"provenance\">Provenance</h2>\n";
  for (const json* d : {&in.result, &in.track, &in.run, &in.profile})
    if (!d->is_null()) o << "<h3>" << xmlEscape((*d)["schema"].get<std::string>()) << "</h3>\n" << provenanceGrid(*d).html();
  if (!r.is_null() && r.contains("manifest"))
    o << "<h3>Manifest (verbatim, sha256 " << xmlEscape(r["manifest"]["sha256"].get<std::string>()) << ")</h3>\n<pre>"
      << xmlEscape(manifestText(r)) << "</pre>\n";
  o << "</body></html>\n";
  return o.str();
}

std::string markdownReport(const ReportInput& in, const std::string& figure_dir) {
  std::ostringstream o;
  o << "# omn-audit report\n\n";
  const auto warnings = reportWarnings(in);
  if (warnings.empty()) o << "No warnings: inputs verified, controls reproduced, restores bitwise.\n\n";
  for (const auto& w : warnings) o << "> **Warning:** " << markdownText(w) << "\n\n";
  o << "## Summary\n\n" << summaryGrid(in).markdown() << "\n";
  o << "## Figures\n\n";
  for (const auto& f : reportFigures(in))
    o << "![" << markdownText(f.title) << "](" << markdownText(figure_dir) << "/" << f.name << ")\n\n*" << markdownText(f.caption) << "*\n\n";
  const json& r = in.result;
  if (!r.is_null() && r.value("schema", "") == "omn-audit/intervention@1") {
    o << "## Sweep\n\n" << sweepGrid(r).markdown() << "\n";
    if (hasReported(r)) o << "## Reported against measured\n\n" << markdownText(reportedNote(r)) << "\n\n" << reportedGrid(r).markdown() << "\n";
  }
  else if (isStudy(r))
    o << "## Study: arms\n\n" << studyArmsGrid(r).markdown() << "\n## Study: QK-norm on − off, paired by seed\n\n"
      << studyComparisonGrid(r).markdown() << "\n";
  else if (!r.is_null()) o << "## Evaluation\n\n" << evalGrid(r).markdown() << "\n";
  if (!in.track.is_null()) o << "## Track: Q/K gains over checkpoints\n\n" << trackGrid(in.track).markdown() << "\n";
  if (!in.run.is_null())
    o << "## Training run\n\n" << runGrid(in.run).markdown() << "\n### Held-out evaluations\n\n" << runEvalsGrid(in.run).markdown() << "\n";
  if (!in.profile.is_null())
    o << "## Q/K gain profile\n\n" << profileSummary(in.profile).markdown() << "\n" << profileLayers(in.profile).markdown() << "\n";
  o << "## Provenance\n\n";
  for (const json* d : {&in.result, &in.track, &in.run, &in.profile})
    if (!d->is_null()) o << "### " << markdownText((*d)["schema"].get<std::string>()) << "\n\n" << provenanceGrid(*d).markdown() << "\n";
  if (!r.is_null() && r.contains("manifest"))
    o << "### Manifest (sha256 " << markdownText(r["manifest"]["sha256"].get<std::string>()) << ")\n\n" << markdownCodeBlock(manifestText(r));
  return o.str();
}

}  // namespace omn::report
