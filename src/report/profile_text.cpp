#include "omn/report/profile_text.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "omn/documents/json_text.h"
#include "omn/io/terminal_text.h"
#include "omn/output/table.h"

namespace omn::report {
using output::Table;
using output::fixed;
using output::general;
using output::significant;
using io::terminalSafe;


using documents::ProfileDocument;

namespace {
// A statistic that may be null (no finite gain to describe) — "n/a", never an exception.
std::string fixedOrNa(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "n/a"; }
// Exactly which bytes a digest checked: for a sharded index, the index and each shard apart.
std::string verification(const documents::ProfileCheckpoint& ck) {
  const bool index_ok = ck.sha256_verified;
  const std::size_t n = ck.shards.size();
  if (n == 0) return index_ok ? "(verified)" : "(not verified: pass --sha256 or --digests)";
  std::size_t shards_ok = 0;
  for (const auto& f : ck.shards) shards_ok += f.sha256_verified;
  const std::string shards = std::to_string(n) + " shard" + (n == 1 ? "" : "s");
  if (index_ok && shards_ok == n) return "(verified: the index and its " + shards + ")";
  if (!index_ok && shards_ok == 0) return "(not verified: neither the index nor its " + shards + "; pin them with --digests)";
  if (shards_ok == 0) return "(verified: the index file only; its " + shards + " are NOT verified: pin them with --digests)";
  return std::string("(verified: ") + (index_ok ? "the index file" : "not the index") + " and " + std::to_string(shards_ok) +
         " of its " + shards + "; the rest is NOT verified: pin every file with --digests)";
}
std::string cell(const std::optional<double>& v) { return v ? general(*v) : ""; }
std::string digestOrDash(const std::optional<std::string>& d) { return d ? *d : "-"; }

void printCheckpoint(std::ostream& os, const documents::ProfileCheckpoint& ck) {
  os << "checkpoint  " << terminalSafe(ck.path) << "\n";
  os << "  sha256    " << digestOrDash(ck.sha256) << "  " << verification(ck) << "\n";
  for (const auto& f : ck.shards)
    os << "  shard     " << terminalSafe(f.path, 200) << "  " << digestOrDash(f.sha256)
       << (f.sha256_verified ? "  (verified)" : "  (not verified)") << "\n";
  os << "  format    " << ck.format << ", " << ck.size_bytes << " bytes, " << ck.tensor_count << " tensors"
     << (ck.state_key.empty() ? "" : ", state dict at '" + terminalSafe(ck.state_key, 80) + "'") << "\n";
  for (const auto& g : ck.shared_storage) os << "  tied      " << terminalSafe(documents::jsonText(g), 400) << " share one storage\n";
  const auto meta = ck.metadataMembers();  // one line per top-level key
  for (std::size_t i = 0; i < meta.size(); ++i)
    os << (i == 0 ? "  metadata  " : "            ") << terminalSafe(meta[i].first, 80) << ": " << terminalSafe(meta[i].second, 160)
       << "\n";  // the whole of it: --json
}

void printModel(std::ostream& os, const ProfileDocument& p) {
  if (p.parameters) {
    const auto& pc = *p.parameters;
    const auto& h = pc.head_identical_to_embedding;
    os << "  params    " << pc.count << " (" << significant(static_cast<double>(pc.count) / 1e6, 4) << "M); output head "
       << (!h ? "tied to the embedding by the preset, or absent" : *h ? "byte-identical to the embedding" : "differs from the embedding")
       << "\n";
  }
  const auto& g = p.gains;
  os << "preset      " << terminalSafe(g.preset, 80) << (p.preset.detected ? " (detected)" : "") << ": " << g.n_layers
     << " layers x Q,K, head_dim " << g.head_dim << ", " << g.layout << " layout, effective gain = " << g.effective << "\n";
  const auto& t = p.tensors;
  if (!t.unmatched.empty() || !t.missing.empty())
    os << "  tensors   " << t.matched << " matched, " << t.unmatched.size() << " not in the preset "
       << terminalSafe(documents::jsonText(t.unmatched), 400) << ", " << t.missing.size() << " of the preset missing "
       << terminalSafe(documents::jsonText(t.missing), 400) << "\n";
}

void printStatistics(std::ostream& os, const ProfileDocument& p) {
  const auto& s = p.statistics;
  const double thr = p.options.threshold;
  os << "\nQ/K gains (" << s.count << " values)\n";
  const long long non_finite = s.count_non_finite.value_or(0);
  if (non_finite > 0 && (!p.non_finite || p.non_finite->empty())) {  // an older profile: no list
    os << "WARNING: " << non_finite << " of " << s.count << " gains are not finite (NaN or inf): every statistic, bin and list below leaves them out\n";
  } else if (non_finite > 0) {
    const auto& first = p.non_finite->front();
    os << "WARNING: " << non_finite << " of " << s.count << " gains are not finite (NaN or inf), first at layer " << first.layer << " "
       << first.role << "[" << first.index << "] = " << first.value << ": every statistic, bin and list below leaves them out\n";
  }
  Table st({"statistic", "value"});
  st.add({"count", std::to_string(s.count)});
  if (non_finite > 0) st.add({"not finite (left out)", std::to_string(non_finite)});
  st.add({"mean", fixedOrNa(s.mean, 6)});
  st.add({"std (population)", fixedOrNa(s.std, 6)});
  st.add({"min", fixedOrNa(s.min, 6)});
  st.add({"max", fixedOrNa(s.max, 6)});
  st.add({"share > " + general(thr), s.share_above_threshold ? fixed(100 * *s.share_above_threshold, 4) + "%" : "n/a"});
  st.add({"negative", std::to_string(s.count_negative)});
  for (const auto& [label, count] : countRows(s)) st.add({"in " + terminalSafe(label), std::to_string(count)});
  st.print(os);
}

void printCoordinates(std::ostream& os, const std::vector<documents::Coordinate>& coords) {
  Table n({"layer", "role", "index", "value"});
  for (const auto& x : coords) n.add({std::to_string(x.layer), x.role, std::to_string(x.index), general(x.value)});
  n.print(os);
}

void printLayers(std::ostream& os, const ProfileDocument& p) {
  os << "\nper layer (RoPE asym = mean |g[i] - g[pair(i)]|)\n";
  Table l({"layer", "Q mean", "Q std", "Q min", "Q max", "K mean", "K std", "K min", "K max", "Q-K", "Q asym", "K asym"});
  for (const auto& x : p.layers) {
    const auto &q = x.q, &k = x.k;
    l.add({std::to_string(x.layer), fixedOrNa(q.mean, 3), fixedOrNa(q.std, 3), fixedOrNa(q.min, 3), fixedOrNa(q.max, 3),
           fixedOrNa(k.mean, 3), fixedOrNa(k.std, 3), fixedOrNa(k.min, 3), fixedOrNa(k.max, 3), fixedOrNa(x.q_minus_k, 3),
           fixed(q.rope_pair_asymmetry.mean_abs_diff, 3), fixed(k.rope_pair_asymmetry.mean_abs_diff, 3)});
  }
  l.print(os);
}
}  // namespace

void printVerification(std::ostream& os, const ProfileDocument& p) {
  const auto& ck = p.checkpoint;
  os << "checkpoint  " << terminalSafe(ck.path) << "\n";
  os << "  sha256    " << digestOrDash(ck.sha256) << "  " << verification(ck) << "\n";
}

std::vector<std::pair<std::string, long long>> countRows(const documents::ProfileStatistics& statistics) {
  struct Row {
    double lo, hi;
    std::string label;
    long long count;
  };
  std::vector<Row> rows;
  for (const auto& [label, r] : statistics.counts) rows.push_back({r.lo.value_or(-INFINITY), r.hi.value_or(INFINITY), label, r.count});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi; });
  std::vector<std::pair<std::string, long long>> out;
  for (const auto& r : rows) out.emplace_back(r.label, r.count);
  return out;
}

void printProfile(std::ostream& os, const ProfileDocument& p) {
  printCheckpoint(os, p.checkpoint);
  printModel(os, p);
  printStatistics(os, p);
  os << "\nhistogram\n";
  Table h({"bin", "count"});
  for (const auto& b : p.histogram) h.add({b.label, std::to_string(b.count)});
  h.print(os);
  if (!p.negatives.empty()) {
    os << "\nnegative coordinates\n";
    printCoordinates(os, p.negatives);
  }
  printLayers(os, p);
  const auto& sc = p.steepest_change.all;
  if (sc.from)  // a `to` the document leaves null printed as the document has it
    os << "\nsteepest change in layer mean: layer " << *sc.from << " -> " << (sc.to ? std::to_string(*sc.to) : "null") << " ("
       << fixed(sc.delta.value_or(NAN), 3) << ")\n";
  os << "\ntop " << p.top.size() << " coordinates\n";
  printCoordinates(os, p.top);
}

std::string profileCsv(const ProfileDocument& p) {
  std::ostringstream os;
  os << "layer,role,tensor,dtype,count,mean,std,min,max,rope_pair_mean_abs_diff,rope_pair_max_abs_diff,q_minus_k\n";
  for (const auto& x : p.layers)
    for (const char r : {'q', 'k'}) {
      const documents::GainVector& v = x.role(r);
      os << x.layer << "," << r << "," << v.tensor << "," << v.dtype << "," << v.count << "," << cell(v.mean) << "," << cell(v.std) << ","
         << cell(v.min) << "," << cell(v.max) << "," << general(v.rope_pair_asymmetry.mean_abs_diff) << ","
         << general(v.rope_pair_asymmetry.max_abs_diff) << "," << cell(x.q_minus_k) << "\n";
    }
  return os.str();
}

void printRegression(std::ostream& os, const audit::RegressionReport& rep, bool all_rows) {
  Table t({"statistic", "baseline", "actual", "difference", "allowed", "status"});
  for (const auto& c : rep.checks) {
    if (!all_rows && c.ok()) continue;
    t.add({c.label, c.baseline ? general(*c.baseline) : "none", c.present ? general(c.actual) : c.baseline ? "missing" : "none",
           c.present && c.baseline ? significant(c.actual - *c.baseline, 3) : "", significant(c.allowed, 3), c.ok() ? "ok" : "DRIFT"});
  }
  os << "regression against " << rep.baseline_kind << " baseline: " << rep.checks.size() - rep.drifted() << " of "
     << rep.checks.size() << " within tolerance\n";
  if (all_rows || rep.drifted()) t.print(os);
}

}  // namespace omn::report
