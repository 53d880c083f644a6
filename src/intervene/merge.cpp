#include "omn/intervene/merge.h"

#include <algorithm>
#include <limits>

#include "omn/errors.h"
#include "omn/intervene/results.h"
#include "omn/io/json_reader.h"
#include "omn/output/json_file.h"
#include "omn/output/provenance.h"
#include "omn/output/shard_set.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

json controlRecord(const json& block, const char* id) {
  return {{"id", id},
          {"kind", "control"},
          {"scores", block.at("result").at("sequences")},
          {"seconds", block.value("seconds", 0.0)},
          {"gain_sha256", block.value("gain_sha256", "")},
          {"mechanism", block.value("mechanism", json())},
          {"divergence", block.value("divergence", json())}};
}

json conditionRecord(const json& c) {
  return {{"id", c.at("id")},          {"kind", "condition"},         {"label", c.at("label")},
          {"op", c.at("op")},          {"manifest_pointer", c.at("manifest_pointer")},
          {"touched", c.at("touched")}, {"applied", c.at("applied")}, {"start_layer", c.at("start_layer")},
          {"scores", c.at("result").at("sequences")}, {"seconds", c.value("seconds", 0.0)},
          {"restore", c.at("restore")}, {"mechanism", c.value("mechanism", json())},
          {"divergence", c.value("divergence", json())},
          {"reported_perplexity", c.contains("reported") ? c["reported"]["perplexity"] : json(nullptr)}};
}

}  // namespace

json mergeShards(const std::vector<std::string>& paths) {
  // what must be the same in every shard, by JSON pointer
  const std::vector<json> docs = output::readShardSet(
      paths, "omn-audit/intervention@1",
      {"/manifest/sha256", "/checkpoint/sha256", "/tokens/sha256", "/tokens/tokenizer_revision",
       "/provenance/model_code_fingerprint", "/provenance/git_revision", "/provenance/libtorch", "/model/config", "/model/dtype",
       "/model/products/bf16", "/model/device", "/model/attention", "/selection", "/gains/checkpoint_sha256", "/control/open/result/sequences", "/kl",
       "/mechanism", "/multiplicity/family_size", "/noise_floor"},
      "sweep");
  const json& first = docs[0];
  ResultsInput in;
  in.base = first;
  in.base.erase("control");
  in.base.erase("conditions");
  in.base["shard"] = nullptr;
  in.base["merged_from"] = output::mergedFrom(paths, docs);
  in.base["provenance"]["finished_utc"] = output::utcNow();
  in.control_open = controlRecord(first["control"]["open"], "control_open");
  in.control_close = controlRecord(first["control"]["close"], "control_close");
  for (const auto& d : docs)
    for (const auto& c : d["conditions"]) in.conditions.push_back(conditionRecord(c));
  std::sort(in.conditions.begin(), in.conditions.end(), [](const json& a, const json& b) {
    return std::stoi(a["id"].get<std::string>().substr(1)) < std::stoi(b["id"].get<std::string>().substr(1));
  });
  // the statistics' settings come from the manifest the shards ran: checked as the manifest's own
  // parser checks them (a resample count of 2^32+1 had become 1, and 2^32+2 groups 2)
  const io::JsonReader r("shard " + paths[0] + " /manifest/verbatim");
  const json& v = first["manifest"]["verbatim"];
  const json& b = v.contains("bootstrap") ? v["bootstrap"] : json::object();
  in.bootstrap.resamples = b.contains("resamples") ? static_cast<int>(r.integer(b["resamples"], "/bootstrap/resamples", 1, 100000000)) : 10000;
  in.bootstrap.seed = b.contains("seed") ? static_cast<std::uint64_t>(r.integer(b["seed"], "/bootstrap/seed", 0)) : 0;
  in.bootstrap.confidence = b.contains("confidence") ? r.num(b["confidence"], "/bootstrap/confidence", 0, 1, true, true) : 0.95;
  if (b.contains("multiplicity")) in.bootstrap.multiplicity = r.choice(b["multiplicity"], "/bootstrap/multiplicity", eval::kMultiplicity);
  if (first.contains("multiplicity"))
    in.family_size = static_cast<std::size_t>(r.integer(first["multiplicity"]["family_size"], "/multiplicity/family_size", 1, 1 << 30));
  if (first.contains("noise_floor")) {  // as the shards flagged their conditions
    in.noise_floor = r.num(first["noise_floor"]["nats_per_token"], "/noise_floor/nats_per_token");
    in.noise_floor_basis = r.str(first["noise_floor"]["basis"], "/noise_floor/basis");
  }
  in.groups = v.contains("groups") ? static_cast<int>(r.integer(v["groups"], "/groups", 1, std::numeric_limits<int>::max())) : 5;
  if (static_cast<std::size_t>(in.groups) > first["control"]["open"]["result"]["sequences"]["tokens"].size())
    r.fail("/groups", "more groups than sequences");
  in.exact_control = first["model"]["device"] == "cpu";
  return assembleResults(in);
}

}  // namespace omn::intervene
