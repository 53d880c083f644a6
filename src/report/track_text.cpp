#include "omn/report/track_text.h"

#include <sstream>

#include "omn/output/table.h"

namespace omn::report {
using output::Table;
using output::fixed;
using output::general;


using nlohmann::json;

namespace {
std::string generalOrEmpty(const json& v) { return v.is_number() ? general(v.get<double>()) : std::string(); }
// a statistic is null when a checkpoint has no finite gain to describe (docs/profile.md)
std::string fix(const json& v, int decimals) { return v.is_number() ? fixed(v.get<double>(), decimals) : "n/a"; }
using output::csvField;
}  // namespace

void printTrack(std::ostream& out, const json& t) {
  const bool drift = !t["baseline"].is_null();
  std::vector<std::string> head = {"step", "checkpoint", "verified", "mean", "std", "min", "max", "negative"};
  const std::size_t n_layers = t["checkpoints"].empty() ? 0 : t["checkpoints"][0]["layers"].size();
  const std::size_t last = n_layers ? n_layers - 1 : 0;
  head.push_back("L0 Q/K mean");
  if (n_layers > 1) head.push_back("L" + std::to_string(last) + " Q/K mean");
  if (drift) head.push_back("drift");
  Table table(head);
  for (const auto& c : t["checkpoints"]) {
    const json& s = c["statistics"];
    auto qk = [&](std::size_t l) {
      return fix(c["layers"][l]["q"]["mean"], 3) + " / " + fix(c["layers"][l]["k"]["mean"], 3);
    };
    std::vector<std::string> row = {c["step"].is_null() ? "-" : c["step"].dump(), c["path"].get<std::string>(),
                                    c["sha256_verified"].get<bool>() ? "sha256" : "no", fix(s["mean"], 4),
                                    fix(s["std"], 4), fix(s["min"], 4), fix(s["max"], 4), std::to_string(s["count_negative"].get<long long>())};
    if (n_layers) row.push_back(qk(0));
    if (n_layers > 1) row.push_back(qk(last));
    if (drift) row.push_back(c["drift"]["drifted"].get<std::size_t>() ? std::to_string(c["drift"]["drifted"].get<std::size_t>()) + " DRIFTED" : "ok");
    table.add(row);
  }
  table.print(out);
  const json& sum = t["summary"];
  out << sum["checkpoints"] << " checkpoint(s), " << sum["verified"] << " verified by SHA-256, " << sum["unverified"]
      << " read without hashing (gain records only)\n";
}

std::string trackCsv(const json& t) {
  std::ostringstream o;
  o << "step,path,sha256,sha256_verified,layer,role,mean,std,min,max\n";
  for (const auto& c : t["checkpoints"])
    for (const auto& l : c["layers"])
      for (const char* role : {"q", "k"}) {
        const json& r = l[role];
        o << (c["step"].is_null() ? "" : c["step"].dump()) << ',' << csvField(c["path"].get<std::string>()) << ','
          << (c["sha256"].is_string() ? c["sha256"].get<std::string>() : "") << ',' << (c["sha256_verified"].get<bool>() ? "true" : "false")
          << ',' << l["layer"].dump() << ',' << role << ',' << generalOrEmpty(r["mean"]) << ',' << generalOrEmpty(r["std"]) << ','
          << generalOrEmpty(r["min"]) << ',' << generalOrEmpty(r["max"]) << '\n';
      }
  return o.str();
}

}  // namespace omn::report
