// Token sets, rows, selection and bootstrap: no model needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "../support/temp_file.h"
#include "omn/errors.h"
#include "omn/eval/bootstrap.h"
#include "omn/eval/session_spec.h"
#include "omn/eval/token_set.h"

using namespace omn::eval;

namespace {
TokenSet setOf(std::vector<std::uint32_t> t, std::optional<std::int64_t> eos) {
  omn::test::TempDir d;
  std::string bytes;
  for (auto x : t) bytes.append(reinterpret_cast<const char*>(&x), 2);  // little-endian uint16
  TokenSetSpec spec;
  spec.path = d.file("t.bin", bytes);
  spec.eos = eos;
  return readTokenSet(spec);
}
}  // namespace

TEST(TokenSet, EosEndsDocumentsAndRowsFollowTheForm) {
  // docs: [5 6 0] [7 8 9 0] [3 4]
  const TokenSet s = setOf({5, 6, 0, 7, 8, 9, 0, 3, 4}, 0);
  EXPECT_EQ(s.doc_starts, (std::vector<std::uint64_t>{0, 3, 7}));
  auto packed = buildRows(s, RowForm::Packed, 4);
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed[0].tokens, (std::vector<std::int64_t>{5, 6, 0, 7}));
  EXPECT_EQ(packed[0].doc, (std::vector<std::int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(packed[1].offset, 4u);
  auto per = buildRows(s, RowForm::PerDocument, 3);
  ASSERT_EQ(per.size(), 3u);  // [5 6 0], [7 8 9], ([0] dropped: nothing to score), [3 4]
  EXPECT_EQ(per[1].tokens, (std::vector<std::int64_t>{7, 8, 9}));
  EXPECT_EQ(per[2].tokens, (std::vector<std::int64_t>{3, 4}));
  auto hist = buildRows(s, RowForm::Historical, 3);
  ASSERT_EQ(hist.size(), 2u);  // EOS stripped: 5 6 7 | 8 9 3 | (4)
  EXPECT_EQ(hist[0].tokens, (std::vector<std::int64_t>{5, 6, 7}));
  EXPECT_EQ(hist[1].doc, (std::vector<std::int64_t>{0, 0, 0}));
}

TEST(TokenSet, ErrorsNameTheProblem) {
  const TokenSet s = setOf({1, 2, 3}, std::nullopt);
  EXPECT_THROW(buildRows(s, RowForm::Packed, 2), omn::UsageError);      // no boundaries
  EXPECT_THROW(buildRows(s, RowForm::Historical, 2), omn::UsageError);  // no EOS
  EXPECT_THROW(buildRows(s, RowForm::PerDocument, 1), omn::UsageError);
  try {
    checkVocabulary(s, 3);
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("token id 3 at position 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(selectRows(3, 4, SelectionMode::First, 0), omn::UsageError);
  EXPECT_THROW(selectRows(0, 1, SelectionMode::First, 0), omn::UsageError);
  EXPECT_THROW(omn::io::parseChoice(kSelectionModes, "random", "--selection"), omn::UsageError);
}

TEST(Selection, SeededIsDeterministicAndSorted) {
  const auto a = selectRows(100, 10, SelectionMode::Seeded, 42), b = selectRows(100, 10, SelectionMode::Seeded, 42), c = selectRows(100, 10, SelectionMode::Seeded, 43);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_NE(a.indices, c.indices);
  EXPECT_TRUE(std::is_sorted(a.indices.begin(), a.indices.end()));
  EXPECT_EQ(std::set<std::size_t>(a.indices.begin(), a.indices.end()).size(), 10u);
  EXPECT_EQ(selectRows(100, 3, SelectionMode::First, 0).indices, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Bootstrap, QuantileInterpolates) {
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 1.0), 4.0);
}

TEST(Bootstrap, IntervalCoversTheEstimateAndIsSeeded) {
  SequenceScores s;
  for (int i = 0; i < 40; ++i) {
    s.nll_sum.push_back(100.0 + 10.0 * std::sin(i));
    s.tokens.push_back(50);
  }
  const BootstrapSpec spec{2000, 0.95, 7};
  const Interval a = bootstrapPerplexity(s, spec), b = bootstrapPerplexity(s, spec);
  EXPECT_EQ(a.low, b.low);
  EXPECT_LT(a.low, a.estimate);
  EXPECT_GT(a.high, a.estimate);
  EXPECT_DOUBLE_EQ(a.estimate, std::exp(s.totalNll() / s.totalTokens()));
  // identical conditions: the paired difference is exactly zero everywhere
  const PairedInterval p = pairedBootstrap(s, s, spec);
  EXPECT_EQ(p.delta_nll_per_token.low, 0.0);
  EXPECT_EQ(p.delta_nll_per_token.high, 0.0);
  EXPECT_EQ(p.ppl_ratio.estimate, 1.0);
  // a uniform shift of every sequence by +1 nat per token: delta exactly 1, ratio e
  SequenceScores t = s;
  for (std::size_t i = 0; i < t.nll_sum.size(); ++i) t.nll_sum[i] += t.tokens[i];
  const PairedInterval q = pairedBootstrap(s, t, spec);
  EXPECT_NEAR(q.delta_nll_per_token.low, 1.0, 1e-12);
  EXPECT_NEAR(q.delta_nll_per_token.high, 1.0, 1e-12);
  EXPECT_NEAR(q.ppl_ratio.estimate, std::exp(1.0), 1e-12);
}

TEST(Bootstrap, GroupsAreContiguousAndValidated) {
  SequenceScores s;
  for (int i = 0; i < 10; ++i) {
    s.nll_sum.push_back(i);
    s.tokens.push_back(1);
  }
  const auto g = groupPerplexities(s, 3);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].first, 0u);
  EXPECT_EQ(g[0].count + g[1].count + g[2].count, 10u);
  EXPECT_DOUBLE_EQ(g[0].perplexity, std::exp((0.0 + 1 + 2 + 3) / 4));
  EXPECT_THROW(groupPerplexities(s, 11), omn::UsageError);
  EXPECT_THROW(bootstrapPerplexity(s, {0, 0.95, 0}), omn::UsageError);
}

// Without --groups: 5, or one group per row where fewer rows are scored; a given count is kept (and
// checked against the rows by checkGroups).
TEST(Bootstrap, DefaultGroupsFollowTheRows) {
  EXPECT_EQ(resolveGroups(kDefaultGroups, false, 50), 5);
  EXPECT_EQ(resolveGroups(kDefaultGroups, false, 3), 3);
  EXPECT_EQ(resolveGroups(kDefaultGroups, false, 1), 1);
  EXPECT_EQ(resolveGroups(7, true, 3), 7);
  EXPECT_THROW(checkGroups(resolveGroups(7, true, 3), 3), omn::UsageError);
}

// One sequence: no interval and no p-value (every resample is that sequence); the estimates kept.
// Two sequences: an interval of width, a p-value in (0, 1].
TEST(Bootstrap, OneSequenceHasNoInterval) {
  const SequenceScores a{{10.0}, {4}}, b{{12.0}, {4}};
  const Interval one = bootstrapPerplexity(a, {200, 0.95, 1});
  EXPECT_DOUBLE_EQ(one.estimate, std::exp(10.0 / 4));
  EXPECT_TRUE(std::isnan(one.low) && std::isnan(one.high));
  const PairedInterval p = pairedBootstrap(a, b, {200, 0.95, 1}, 0.99);
  EXPECT_DOUBLE_EQ(p.delta_nll_per_token.estimate, 0.5);
  EXPECT_DOUBLE_EQ(p.ppl_ratio.estimate, std::exp(0.5));
  EXPECT_TRUE(std::isnan(p.ppl_ratio.low) && std::isnan(p.ppl_ratio.high) && std::isnan(p.p_value));
  EXPECT_TRUE(std::isnan(p.simultaneous_ratio.low) && std::isnan(p.simultaneous_delta.high));
  const SequenceScores a2{{10.0, 11.0}, {4, 4}}, b2{{12.0, 11.5}, {4, 4}};
  const PairedInterval q = pairedBootstrap(a2, b2, {200, 0.95, 1});
  EXPECT_LT(q.ppl_ratio.low, q.ppl_ratio.high);
  EXPECT_GT(q.p_value, 0);
  EXPECT_LE(q.p_value, 1);
}

// The default batch: about 2,048 tokens a pass, one row of 2,048 or more, at most 64 rows and at
// most the rows there are.
TEST(AutoBatch, AboutTwoThousandTokensAPass) {
  using omn::eval::autoBatch;
  EXPECT_EQ(autoBatch(128, 1024), 16);
  EXPECT_EQ(autoBatch(2048, 50), 1);
  EXPECT_EQ(autoBatch(4096, 50), 1);
  EXPECT_EQ(autoBatch(100, 1024), 20);
  EXPECT_EQ(autoBatch(16, 1024), 64);  // capped
  EXPECT_EQ(autoBatch(128, 6), 6);     // the rows there are
  EXPECT_EQ(autoBatch(128, 0), 1);
}
