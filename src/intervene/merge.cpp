#include "omn/intervene/merge.h"

#include <algorithm>

#include "omn/errors.h"
#include "omn/intervene/results.h"
#include "omn/report/json_file.h"
#include "omn/report/provenance.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

json controlRecord(const json& block, const char* id) {
  return {{"id", id},
          {"kind", "control"},
          {"scores", block.at("result").at("sequences")},
          {"seconds", block.value("seconds", 0.0)},
          {"gain_sha256", block.value("gain_sha256", "")},
          {"mechanism", block.value("mechanism", json())}};
}

json conditionRecord(const json& c) {
  return {{"id", c.at("id")},          {"kind", "condition"},         {"label", c.at("label")},
          {"op", c.at("op")},          {"manifest_pointer", c.at("manifest_pointer")},
          {"touched", c.at("touched")}, {"start_layer", c.at("start_layer")},
          {"scores", c.at("result").at("sequences")}, {"seconds", c.value("seconds", 0.0)},
          {"restore", c.at("restore")}, {"mechanism", c.value("mechanism", json())}};
}

}  // namespace

json mergeShards(const std::vector<std::string>& paths) {
  if (paths.size() < 2) throw UsageError("merge: give the outputs of every shard (at least two)");
  std::vector<json> docs;
  for (const auto& p : paths) {
    json d = report::readJsonFile(p, "shard");
    if (d.value("schema", "") != "omn-audit/intervention@1")
      throw UsageError(p + ": /schema: expected \"omn-audit/intervention@1\"");
    if (d["shard"].is_null()) throw UsageError(p + ": /shard: not the output of a --shard run");
    docs.push_back(std::move(d));
  }
  const json& first = docs[0];
  const int count = first["shard"]["count"].get<int>();
  if (static_cast<int>(docs.size()) != count)
    throw UsageError("merge: " + std::to_string(docs.size()) + " files for a sweep of " + std::to_string(count) + " shards");
  std::vector<bool> seen(static_cast<std::size_t>(count), false);
  // what must be the same in every shard, by JSON pointer
  const char* same[] = {"/manifest/sha256", "/checkpoint/sha256", "/tokens/sha256", "/tokens/tokenizer_revision",
                        "/provenance/model_code_fingerprint", "/provenance/git_revision", "/provenance/libtorch",
                        "/model/config", "/model/dtype", "/model/device", "/model/attention", "/selection",
                        "/gains/checkpoint_sha256", "/control/open/result/sequences"};
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const int idx = docs[i]["shard"]["index"].get<int>();
    if (docs[i]["shard"]["count"] != count || idx < 0 || idx >= count || seen[static_cast<std::size_t>(idx)])
      throw UsageError(paths[i] + ": /shard: index " + std::to_string(idx) + " of " + docs[i]["shard"]["count"].dump() +
                       " is a duplicate or out of range");
    seen[static_cast<std::size_t>(idx)] = true;
    for (const char* ptr : same) {
      const json::json_pointer jp(ptr);
      if (!docs[i].contains(jp) || docs[i][jp] != first[jp])
        throw UsageError("merge: " + paths[i] + ": " + ptr + " differs from " + paths[0] + "'s: the shards are not one sweep");
    }
  }
  ResultsInput in;
  in.base = first;
  in.base.erase("control");
  in.base.erase("conditions");
  in.base["shard"] = nullptr;
  json from = json::array();
  for (std::size_t i = 0; i < docs.size(); ++i)
    from.push_back({{"path", paths[i]}, {"shard", docs[i]["shard"]}, {"cache", docs[i]["cache"]},
                    {"started_utc", docs[i]["provenance"]["started_utc"]}});
  in.base["merged_from"] = from;
  in.base["provenance"]["finished_utc"] = report::utcNow();
  in.control_open = controlRecord(first["control"]["open"], "control_open");
  in.control_close = controlRecord(first["control"]["close"], "control_close");
  for (const auto& d : docs)
    for (const auto& c : d["conditions"]) in.conditions.push_back(conditionRecord(c));
  std::sort(in.conditions.begin(), in.conditions.end(), [](const json& a, const json& b) {
    return std::stoi(a["id"].get<std::string>().substr(1)) < std::stoi(b["id"].get<std::string>().substr(1));
  });
  const json& b = first["manifest"]["verbatim"].value("bootstrap", json::object());
  in.bootstrap.resamples = b.value("resamples", 10000);
  in.bootstrap.seed = b.value("seed", 0);
  in.bootstrap.confidence = b.value("confidence", 0.95);
  in.groups = first["manifest"]["verbatim"].value("groups", 5);
  in.exact_control = first["model"]["device"] == "cpu";
  return assembleResults(in);
}

}  // namespace omn::intervene
