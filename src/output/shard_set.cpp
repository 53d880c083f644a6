#include "omn/output/shard_set.h"

#include "omn/documents/document.h"
#include "omn/errors.h"
#include "omn/output/json_file.h"

namespace omn::output {

using nlohmann::json;

std::vector<json> readShardSet(const std::vector<std::string>& paths, const std::string& schema, const std::vector<std::string>& same,
                               const std::string& what) {
  if (paths.size() < 2) throw UsageError("merge: give the outputs of every shard (at least two)");
  std::vector<json> docs;
  for (const auto& p : paths) {
    json d = readJsonFile(p, "shard");
    documents::acceptDocument(d, "shard " + p,
                      {schema == documents::schemaId(documents::DocumentKind::study) ? documents::DocumentKind::study : documents::DocumentKind::intervention});
    if (!d.contains("shard") || !d["shard"].is_object() || !d["shard"].contains("index") || !d["shard"].contains("count") ||
        !d["shard"]["index"].is_number_integer() || !d["shard"]["count"].is_number_integer())
      throw UsageError(p + ": /shard: not the output of a --shard run");
    docs.push_back(std::move(d));
  }
  const json& first = docs[0];
  const auto count = first["shard"]["count"].get<std::int64_t>();
  if (static_cast<std::int64_t>(docs.size()) != count)
    throw UsageError("merge: " + std::to_string(docs.size()) + " files for a " + what + " of " + std::to_string(count) + " shards");
  std::vector<bool> seen(static_cast<std::size_t>(count), false);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto idx = docs[i]["shard"]["index"].get<std::int64_t>();
    if (docs[i]["shard"]["count"] != count || idx < 0 || idx >= count || seen[static_cast<std::size_t>(idx)])
      throw UsageError(paths[i] + ": /shard: index " + std::to_string(idx) + " of " + docs[i]["shard"]["count"].dump() +
                       " is a duplicate or out of range");
    seen[static_cast<std::size_t>(idx)] = true;
    for (const auto& ptr : same) {
      const json::json_pointer jp(ptr);
      if (docs[i].contains(jp) != first.contains(jp) || (first.contains(jp) && docs[i][jp] != first[jp]))
        throw UsageError("merge: " + paths[i] + ": " + ptr + " differs from " + paths[0] + "'s: the shards are not one " + what);
    }
  }
  return docs;
}

json mergedFrom(const std::vector<std::string>& paths, const std::vector<json>& docs) {
  json from = json::array();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    json e = {{"path", paths[i]}, {"shard", docs[i]["shard"]}, {"started_utc", docs[i]["provenance"].value("started_utc", json())}};
    if (docs[i].contains("cache")) e["cache"] = docs[i]["cache"];
    from.push_back(e);
  }
  return from;
}

}  // namespace omn::output
