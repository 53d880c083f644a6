#include "omn/intervene/merge.h"

#include <algorithm>
#include <limits>

#include "omn/errors.h"
#include "omn/eval/bootstrap.h"
#include "omn/intervene/results.h"
#include "omn/io/json_reader.h"
#include "omn/output/provenance.h"
#include "omn/output/shard_set.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

// The statistics' settings come from the manifest the shards ran: checked as the manifest's own
// parser checks them (a resample count of 2^32+1 had become 1, and 2^32+2 groups 2); the family and
// the noise floor as the shards recorded them (they flagged their conditions by it).
void statisticsOf(const documents::InterventionDocument& first, const std::string& path, ResultsInput& in) {
  const io::JsonReader r("shard " + path + " /manifest/verbatim");
  const json& v = first.manifest.verbatim;
  const json& b = v.contains("bootstrap") ? v["bootstrap"] : json::object();
  in.bootstrap.resamples = b.contains("resamples") ? static_cast<int>(r.integer(b["resamples"], "/bootstrap/resamples", 1, 100000000)) : 10000;
  in.bootstrap.seed = b.contains("seed") ? static_cast<std::uint64_t>(r.integer(b["seed"], "/bootstrap/seed", 0)) : 0;
  in.bootstrap.confidence = b.contains("confidence") ? r.num(b["confidence"], "/bootstrap/confidence", 0, 1, true, true) : 0.95;
  if (b.contains("multiplicity")) in.bootstrap.multiplicity = r.choice(b["multiplicity"], "/bootstrap/multiplicity", eval::kMultiplicity);
  if (first.multiplicity)
    in.family_size = static_cast<std::size_t>(r.integer(json(first.multiplicity->family_size), "/multiplicity/family_size", 1, 1 << 30));
  if (first.noise_floor) {
    in.noise_floor = first.noise_floor->nats_per_token;
    in.noise_floor_basis = first.noise_floor->basis;
  }
  in.groups = eval::resolveGroups(
      v.contains("groups") ? static_cast<int>(r.integer(v["groups"], "/groups", 1, std::numeric_limits<int>::max())) : eval::kDefaultGroups,
      v.contains("groups"), first.control.open.result.sequences.tokens.size());
  if (static_cast<std::size_t>(in.groups) > first.control.open.result.sequences.tokens.size()) r.fail("/groups", "more groups than sequences");
}

}  // namespace

documents::InterventionDocument mergeShards(const std::vector<std::string>& paths) {
  // what must be the same in every shard, by JSON pointer
  const std::vector<json> docs = output::readShardSet(
      paths, "omn-audit/intervention@1",
      {"/manifest/sha256", "/checkpoint/sha256", "/tokens/sha256", "/tokens/tokenizer_revision",
       "/provenance/model_code_fingerprint", "/provenance/git_revision", "/provenance/libtorch", "/model/config", "/model/dtype",
       "/model/products/bf16", "/model/device", "/model/attention", "/selection", "/gains/checkpoint_sha256", "/control/open/result/sequences", "/kl",
       "/mechanism", "/multiplicity/family_size", "/noise_floor"},
      "sweep");
  std::vector<documents::InterventionDocument> shards;
  for (std::size_t k = 0; k < docs.size(); ++k) shards.push_back(documents::InterventionDocument::fromJson(docs[k], "shard " + paths[k]));
  const documents::InterventionDocument& first = shards[0];
  ResultsInput in;
  in.base = first;
  in.base.control = {};
  in.base.conditions.clear();
  in.base.shard.reset();
  in.base.merged_from = output::mergedFrom(paths, docs);
  in.base.provenance.finished_utc = output::utcNow();
  in.control_open = controlFromResult(first.control.open, "control_open");
  in.control_close = controlFromResult(first.control.close, "control_close");
  for (const documents::InterventionDocument& shard : shards)
    for (const documents::SweepCondition& c : shard.conditions) in.conditions.push_back(conditionFromResult(c));
  std::sort(in.conditions.begin(), in.conditions.end(), [](const PassRecord& a, const PassRecord& b) {
    return std::stoi(a.id.substr(1)) < std::stoi(b.id.substr(1));
  });
  statisticsOf(first, paths[0], in);
  in.exact_control = first.model.device == "cpu";
  return assembleResults(in);
}

}  // namespace omn::intervene
