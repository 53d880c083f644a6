// The chart layout's small parts on the inputs hostile documents bring: ticks that end and differ,
// labels cut on a character boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "../../src/report/chart.h"

using omn::report::Axis;
namespace chart = omn::report::chart;

TEST(Chart, TicksEndAndAreDistinctOnDegenerateAxes) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const Axis& a : {Axis{-1e308, 1e308, false}, Axis{0, inf, false}, Axis{0, 1, true}, Axis{-1, 10, true}, Axis{5, 5, false},
                        Axis{std::nan(""), 1, false}, Axis{1e-300, 1e300, true}})
    EXPECT_LE(a.ticks(6).size(), 700u);
  // near-constant data: the range is widened, the ticks differ and so do their labels
  for (auto [lo, hi] : {std::pair{12.5, 12.500000001}, std::pair{0.3, 0.1 + 0.2}, std::pair{-6e-10, 6e-10}}) {
    const Axis a = chart::rangeOf(lo, hi, false);
    const auto t = a.ticks(6);
    ASSERT_GE(t.size(), 3u) << lo;
    const auto labels = chart::tickLabels(t);
    EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size()) << lo << " " << labels.front();
  }
  EXPECT_EQ(chart::tickLabels({0, 0.05, 0.1, 0.15}), (std::vector<std::string>{"0.00", "0.05", "0.10", "0.15"}));
  EXPECT_EQ(chart::tickLabels({50, 100, 200}, false), (std::vector<std::string>{"50", "100", "200"}));
  EXPECT_EQ(chart::tickLabels({2.5e-10, 5e-10}), (std::vector<std::string>{"2.5e-10", "5e-10"}));
}

TEST(Chart, LogAxesWithinADecadeHaveEnoughTicks) {
  const Axis a = chart::rangeOf(82.5, 100.0, true);
  EXPECT_GE(a.ticks(6).size(), 4u);
}

TEST(Chart, LabelsAreCutOnACharacterBoundary) {
  const std::string s = "transplant from abcé.pt";  // é is two bytes, at 19 and 20
  for (std::size_t max = 15; max < s.size(); ++max) {
    const std::string c = chart::cut(s, max);
    const std::string kept = c.substr(0, c.size() - std::string("…").size());
    for (std::size_t i = 0; i < kept.size(); ++i)
      if ((static_cast<unsigned char>(kept[i]) & 0xC0) == 0xC0) {
        ASSERT_LT(i + 1, kept.size()) << "a lead byte at the end, max " << max;
      }
    EXPECT_LE(kept.size(), max);
  }
  EXPECT_EQ(chart::cut("short", 10), "short");
}
