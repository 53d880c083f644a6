// --mechanism measures every row of the one metric table (documents/layer_metrics.h) on a real
// forward pass, and the sweep's and the trainer's records carry each under its one name: a metric
// with a row but no computation, or a computation under another name, fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "omn/documents/intervention_document.h"
#include "omn/documents/layer_metrics.h"
#include "omn/eval/evaluator.h"
#include "omn/eval/mechanism.h"
#include "omn/train/evaluation.h"
#include "../support/tiny_model.h"

TEST(LayerMetricsMeasured, APassMeasuresEveryRowAndEveryRecordNamesIt) {
  c10::InferenceMode inference;
  const omn::test::TinyModelFiles files;
  const auto session = files.open();
  const omn::eval::Evaluator ev(*session->model, session->rows, session->path, session->spec.batch, session->device);
  std::vector<omn::eval::LayerMechanism> mech;
  omn::eval::ScoreOptions so;
  so.mech = &mech;
  (void)ev.score(so);
  ASSERT_EQ(mech.size(), static_cast<std::size_t>(omn::test::kTinyLayers));
  for (const auto& layer : mech)
    for (const auto& row : omn::documents::kLayerMetrics) {
      const double v = layer.*row.value;
      EXPECT_TRUE(std::isfinite(v) && v != 0) << row.key << " = " << v << ": no computation fills it (eval/mechanism.cpp)";
    }
  // the sweep's table (intervene) and the trainer's log (its record's to_json) write each row under its key
  const nlohmann::json entry = omn::documents::MechanismLayer{0, mech[0]};
  omn::train::Evaluation e;
  omn::train::LayerHealth h;
  h.metrics = mech[0];
  e.layers = {h};
  const nlohmann::json log = e;
  for (const auto& row : omn::documents::kLayerMetrics) {
    EXPECT_EQ(entry[row.key].get<double>(), mech[0].*row.value) << row.key;
    EXPECT_EQ(log["layers"][0].contains(row.key), row.trained) << row.key;
  }
}
