#include "omn/report/track_text.h"

#include <sstream>

#include "omn/output/table.h"

namespace omn::report {
using output::Table;
using output::fixed;
using output::general;


using documents::TrackDocument;

namespace {
std::string generalOrEmpty(const std::optional<double>& v) { return v ? general(*v) : std::string(); }
// a statistic is empty when a checkpoint has no finite gain to describe (docs/profile.md)
std::string fix(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "n/a"; }
using output::csvField;
}  // namespace

void printTrack(std::ostream& out, const TrackDocument& t) {
  const bool drift = t.baseline.has_value();
  std::vector<std::string> head = {"step", "checkpoint", "verified", "mean", "std", "min", "max", "negative"};
  const std::size_t n_layers = t.checkpoints.empty() ? 0 : t.checkpoints[0].layers.size();
  const std::size_t last = n_layers ? n_layers - 1 : 0;
  head.push_back("L0 Q/K mean");
  if (n_layers > 1) head.push_back("L" + std::to_string(last) + " Q/K mean");
  if (drift) head.push_back("drift");
  Table table(head);
  for (const auto& c : t.checkpoints) {
    const auto& s = c.statistics;
    auto qk = [&](std::size_t l) { return fix(c.layers.at(l).q.mean, 3) + " / " + fix(c.layers.at(l).k.mean, 3); };
    std::vector<std::string> row = {c.step ? std::to_string(*c.step) : "-", c.path, c.sha256_verified ? "sha256" : "no", fix(s.mean, 4),
                                    fix(s.std, 4), fix(s.min, 4), fix(s.max, 4), std::to_string(s.count_negative)};
    if (n_layers) row.push_back(qk(0));
    if (n_layers > 1) row.push_back(qk(last));
    if (drift) {
      const std::int64_t drifted = c.drift ? c.drift->drifted : 0;
      row.push_back(drifted ? std::to_string(drifted) + " DRIFTED" : "ok");
    }
    table.add(row);
  }
  table.print(out);
  const auto& sum = t.summary;
  out << sum.checkpoints << " checkpoint(s), " << sum.verified << " verified by SHA-256, " << sum.unverified
      << " read without hashing (gain records only)\n";
}

std::string trackCsv(const TrackDocument& t) {
  std::ostringstream o;
  o << "step,path,sha256,sha256_verified,layer,role,mean,std,min,max\n";
  for (const auto& c : t.checkpoints)
    for (const auto& l : c.layers)
      for (const char role : {'q', 'k'}) {
        const documents::RoleSummary& r = l.role(role);
        o << (c.step ? std::to_string(*c.step) : "") << ',' << csvField(c.path) << ',' << c.sha256.value_or("") << ','
          << (c.sha256_verified ? "true" : "false") << ',' << l.layer << ',' << role << ',' << generalOrEmpty(r.mean) << ','
          << generalOrEmpty(r.std) << ',' << generalOrEmpty(r.min) << ',' << generalOrEmpty(r.max) << '\n';
      }
  return o.str();
}

}  // namespace omn::report
