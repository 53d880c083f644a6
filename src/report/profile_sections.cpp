// The sections of a profile (omn-audit/profile@1) in the report: the gains' statistics and count
// ranges, one row per layer, the summary row.
#include "chart.h"
#include "omn/output/table.h"
#include "omn/report/profile_text.h"
#include "sections.h"

namespace omn::report {
using output::fixed;
using output::general;

Grid profileSummary(const documents::ProfileDocument& p) {
  const documents::ProfileStatistics& s = p.statistics;
  Grid g{{"statistic", "value"},
          {{"gain elements (count)", std::to_string(s.count)},
           {"mean (×)", f(s.mean, 6)},
           {"population std (×)", f(s.std, 6)},
           {"min (×)", f(s.min, 6)},
           {"max (×)", f(s.max, 6)},
           {"negative coordinates (count)", std::to_string(s.count_negative)}}};
  if (chart::drawsThreshold(p))  // OMN-1's audit figure, or a threshold someone chose
    g.rows.push_back({"share above " + general(p.options.threshold) + " (%)",
                      s.share_above_threshold ? fixed(100 * *s.share_above_threshold, 4) : std::string("NaN")});
  for (const auto& [label, count] : countRows(s)) g.rows.push_back({"in " + label + " (count)", std::to_string(count)});
  return g;
}

Grid profileLayers(const documents::ProfileDocument& p) {
  Grid g{{"layer", "Q mean (×)", "Q min (×)", "Q max (×)", "K mean (×)", "K min (×)", "K max (×)", "Q − K (×)"}, {}};
  for (const auto& l : p.layers)
    g.rows.push_back({std::to_string(l.layer), f(l.q.mean, 3), f(l.q.min, 3), f(l.q.max, 3), f(l.k.mean, 3), f(l.k.min, 3), f(l.k.max, 3),
                      f(l.q_minus_k, 3)});
  return g;
}

// The gains' range.
void profileSummaryRows(Grid& g, const documents::ProfileDocument& p) {
  const documents::ProfileStatistics& st = p.statistics;
  if (st.max)
    g.rows.push_back({"Q/K gains", std::to_string(st.count) + " values, mean " + f(st.mean, 4) + ", range [" + f(st.min, 4) + ", " +
                                       f(st.max, 4) + "], " + std::to_string(st.count_negative) + " negative"});
}

}  // namespace omn::report
