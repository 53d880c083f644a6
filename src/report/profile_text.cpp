#include "omn/report/profile_text.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "omn/output/table.h"
#include "omn/io/terminal_text.h"

namespace omn::report {
using output::Table;
using output::fixed;
using output::general;
using output::significant;
using io::terminalSafe;


using nlohmann::json;

namespace {
// A statistic that may be null (no finite gain to describe) — "n/a", never an exception.
std::string fixedOrNa(const json& v, int decimals) { return v.is_number() ? fixed(v.get<double>(), decimals) : "n/a"; }
// Exactly which bytes a digest checked: for a sharded index, the index and each shard apart.
std::string verification(const json& ck) {
  const bool index_ok = ck["sha256_verified"].get<bool>();
  const std::size_t n = ck["shards"].size();
  if (n == 0) return index_ok ? "(verified)" : "(not verified: pass --sha256 or --digests)";
  std::size_t shards_ok = 0;
  for (const auto& f : ck["shards"]) shards_ok += f.value("sha256_verified", false);
  const std::string shards = std::to_string(n) + " shard" + (n == 1 ? "" : "s");
  if (index_ok && shards_ok == n) return "(verified: the index and its " + shards + ")";
  if (!index_ok && shards_ok == 0) return "(not verified: neither the index nor its " + shards + "; pin them with --digests)";
  if (shards_ok == 0) return "(verified: the index file only; its " + shards + " are NOT verified: pin them with --digests)";
  return std::string("(verified: ") + (index_ok ? "the index file" : "not the index") + " and " + std::to_string(shards_ok) +
         " of its " + shards + "; the rest is NOT verified: pin every file with --digests)";
}
std::string cell(const json& v) { return v.is_number() ? general(v.get<double>()) : ""; }
}  // namespace

void printVerification(std::ostream& os, const json& p) {
  const json& ck = p["checkpoint"];
  os << "checkpoint  " << terminalSafe(ck["path"].get<std::string>()) << "\n";
  os << "  sha256    " << ck["sha256"].get<std::string>() << "  " << verification(ck) << "\n";
}

std::vector<std::pair<std::string, long long>> countRows(const json& statistics) {
  struct Row {
    double lo, hi;
    std::string label;
    long long count;
  };
  std::vector<Row> rows;
  if (statistics.contains("counts"))
    for (const auto& [label, r] : statistics["counts"].items())
      rows.push_back({r["lo"].is_null() ? -INFINITY : r["lo"].get<double>(), r["hi"].is_null() ? INFINITY : r["hi"].get<double>(),
                      label, r["count"].get<long long>()});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi; });
  std::vector<std::pair<std::string, long long>> out;
  for (const auto& r : rows) out.emplace_back(r.label, r.count);
  return out;
}

void printProfile(std::ostream& os, const json& p) {
  const json& ck = p["checkpoint"];
  os << "checkpoint  " << terminalSafe(ck["path"].get<std::string>()) << "\n";
  os << "  sha256    " << ck["sha256"].get<std::string>() << "  " << verification(ck) << "\n";
  for (const auto& f : ck["shards"])
    os << "  shard     " << terminalSafe(f["path"].get<std::string>(), 200) << "  "
       << (f["sha256"].is_string() ? f["sha256"].get<std::string>() : "-")
       << (f.value("sha256_verified", false) ? "  (verified)" : "  (not verified)") << "\n";
  os << "  format    " << ck["format"].get<std::string>() << ", " << ck["size_bytes"] << " bytes, "
     << ck["tensor_count"] << " tensors" << (ck["state_key"].get<std::string>().empty() ? "" : ", state dict at '" +
                                             terminalSafe(ck["state_key"].get<std::string>(), 80) + "'") << "\n";
  for (const auto& g : ck["shared_storage"])
    os << "  tied      " << terminalSafe(g.dump(-1, ' ', false, json::error_handler_t::replace), 400) << " share one storage\n";
  const json& meta = ck["metadata"];  // one line per top-level key
  for (auto it = meta.begin(); it != meta.end(); ++it)
    os << (it == meta.begin() ? "  metadata  " : "            ") << terminalSafe(it.key(), 80) << ": "
       << terminalSafe(it->dump(-1, ' ', false, json::error_handler_t::replace), 160) << "\n";  // the whole of it: --json
  if (p.contains("parameters")) {
    const json& pc = p["parameters"];
    const json& h = pc["head_identical_to_embedding"];
    os << "  params    " << pc["count"].get<long long>() << " ("  << significant(pc["count"].get<double>() / 1e6, 4) << "M); output head "
       << (h.is_null() ? "tied to the embedding by the preset, or absent" : h.get<bool>() ? "byte-identical to the embedding" : "differs from the embedding")
       << "\n";
  }
  const json& g = p["gains"];
  os << "preset      " << terminalSafe(g["preset"].get<std::string>(), 80) << (p["preset"]["detected"].get<bool>() ? " (detected)" : "")
     << ": " << g["n_layers"] << " layers x Q,K, head_dim " << g["head_dim"] << ", " << g["layout"].get<std::string>()
     << " layout, effective gain = " << g["effective"].get<std::string>() << "\n";
  const json& t = p["tensors"];
  if (!t["unmatched"].empty() || !t["missing"].empty())
    os << "  tensors   " << t["matched"] << " matched, " << t["unmatched"].size() << " not in the preset "
       << terminalSafe(t["unmatched"].dump(-1, ' ', false, json::error_handler_t::replace), 400) << ", " << t["missing"].size()
       << " of the preset missing " << terminalSafe(t["missing"].dump(-1, ' ', false, json::error_handler_t::replace), 400) << "\n";

  const json& s = p["statistics"];
  const double thr = p["options"]["threshold"].get<double>();
  os << "\nQ/K gains (" << s["count"] << " values)\n";
  const long long non_finite = s.value("count_non_finite", 0LL);
  if (non_finite > 0 && (!p.contains("non_finite") || p["non_finite"].empty())) {  // an older profile: no list
    os << "WARNING: " << non_finite << " of " << s["count"] << " gains are not finite (NaN or inf): every statistic, bin and list below leaves them out\n";
  } else if (non_finite > 0) {
    const json& first = p["non_finite"][0];
    os << "WARNING: " << non_finite << " of " << s["count"] << " gains are not finite (NaN or inf), first at layer "
       << first["layer"] << " " << first["role"].get<std::string>() << "[" << first["index"] << "] = "
       << first["value"].get<std::string>() << ": every statistic, bin and list below leaves them out\n";
  }
  Table st({"statistic", "value"});
  st.add({"count", std::to_string(s["count"].get<long long>())});
  if (non_finite > 0) st.add({"not finite (left out)", std::to_string(non_finite)});
  st.add({"mean", fixedOrNa(s["mean"], 6)});
  st.add({"std (population)", fixedOrNa(s["std"], 6)});
  st.add({"min", fixedOrNa(s["min"], 6)});
  st.add({"max", fixedOrNa(s["max"], 6)});
  st.add({"share > " + general(thr), fixed(100 * s["share_above_threshold"].get<double>(), 4) + "%"});
  st.add({"negative", std::to_string(s["count_negative"].get<long long>())});
  for (const auto& [label, count] : countRows(s)) st.add({"in " + terminalSafe(label), std::to_string(count)});
  st.print(os);

  os << "\nhistogram\n";
  Table h({"bin", "count"});
  for (const auto& b : p["histogram"]) h.add({b["label"].get<std::string>(), std::to_string(b["count"].get<long long>())});
  h.print(os);

  if (!p["negatives"].empty()) {
    os << "\nnegative coordinates\n";
    Table n({"layer", "role", "index", "value"});
    for (const auto& x : p["negatives"])
      n.add({std::to_string(x["layer"].get<int>()), x["role"].get<std::string>(), std::to_string(x["index"].get<int>()),
             general(x["value"])});
    n.print(os);
  }

  os << "\nper layer (RoPE asym = mean |g[i] - g[pair(i)]|)\n";
  Table l({"layer", "Q mean", "Q std", "Q min", "Q max", "K mean", "K std", "K min", "K max", "Q-K", "Q asym", "K asym"});
  for (const auto& x : p["layers"]) {
    const json &q = x["q"], &k = x["k"];
    l.add({std::to_string(x["layer"].get<int>()), fixedOrNa(q["mean"], 3), fixedOrNa(q["std"], 3), fixedOrNa(q["min"], 3),
           fixedOrNa(q["max"], 3), fixedOrNa(k["mean"], 3), fixedOrNa(k["std"], 3), fixedOrNa(k["min"], 3), fixedOrNa(k["max"], 3),
           fixedOrNa(x["q_minus_k"], 3), fixed(q["rope_pair_asymmetry"]["mean_abs_diff"], 3),
           fixed(k["rope_pair_asymmetry"]["mean_abs_diff"], 3)});
  }
  l.print(os);

  const json& sc = p["steepest_change"]["all"];
  if (!sc["from"].is_null())
    os << "\nsteepest change in layer mean: layer " << sc["from"] << " -> " << sc["to"] << " (" << fixed(sc["delta"], 3)
       << ")\n";
  os << "\ntop " << p["top"].size() << " coordinates\n";
  Table tp({"layer", "role", "index", "value"});
  for (const auto& x : p["top"])
    tp.add({std::to_string(x["layer"].get<int>()), x["role"].get<std::string>(), std::to_string(x["index"].get<int>()),
            general(x["value"])});
  tp.print(os);
}

std::string profileCsv(const json& p) {
  std::ostringstream os;
  os << "layer,role,tensor,dtype,count,mean,std,min,max,rope_pair_mean_abs_diff,rope_pair_max_abs_diff,q_minus_k\n";
  for (const auto& x : p["layers"])
    for (const char* r : {"q", "k"}) {
      const json& v = x[r];
      os << x["layer"] << "," << r << "," << v["tensor"].get<std::string>() << "," << v["dtype"].get<std::string>() << ","
         << v["count"] << "," << cell(v["mean"]) << "," << cell(v["std"]) << "," << cell(v["min"]) << ","
         << cell(v["max"]) << "," << cell(v["rope_pair_asymmetry"]["mean_abs_diff"]) << ","
         << cell(v["rope_pair_asymmetry"]["max_abs_diff"]) << "," << cell(x["q_minus_k"]) << "\n";
    }
  return os.str();
}

void printRegression(std::ostream& os, const audit::RegressionReport& rep, bool all_rows) {
  Table t({"statistic", "baseline", "actual", "difference", "allowed", "status"});
  for (const auto& c : rep.checks) {
    if (!all_rows && c.ok()) continue;
    t.add({c.label, general(c.baseline), c.present ? general(c.actual) : "missing",
           c.present ? significant(c.actual - c.baseline, 3) : "", significant(c.allowed, 3), c.ok() ? "ok" : "DRIFT"});
  }
  os << "regression against " << rep.baseline_kind << " baseline: " << rep.checks.size() - rep.drifted() << " of "
     << rep.checks.size() << " within tolerance\n";
  if (all_rows || rep.drifted()) t.print(os);
}

}  // namespace omn::report
