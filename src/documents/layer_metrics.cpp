#include "omn/documents/layer_metrics.h"

#include <algorithm>

#include "json_fields.h"

namespace omn::documents {

using nlohmann::json;

void foldBatch(LayerMetrics& into, const LayerMetrics& batch, double weight, bool first) {
  for (const LayerMetric& row : kLayerMetrics) {
    double& v = into.*row.value;
    const double b = batch.*row.value;
    if (row.across_batches == AcrossBatches::Max) v = first ? b : std::max(v, b);
    else v += weight * (b - v);
  }
}

void readLayerMetrics(const json& j, LayerMetrics& m) {
  for (const LayerMetric& row : kLayerMetrics) {
    std::optional<double> v;
    fields::get(j, row.key, v);
    m.*row.value = v ? *v : std::nan("");
  }
}

void writeLayerMetrics(json& j, const LayerMetrics& m) {
  for (const LayerMetric& row : kLayerMetrics) {
    const double v = m.*row.value;
    j[row.key] = std::isfinite(v) ? json(v) : json(nullptr);
  }
}

}  // namespace omn::documents
