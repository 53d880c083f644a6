// The manifest's /conditions (docs/manifest.md): each entry's op, layers, coordinates, targets and
// parameter lists expanded into numbered, labelled conditions, with their /reported perplexities.
// The manifest's other blocks are read in manifest.cpp, which calls these two (manifest_conditions.h).
#include "manifest_conditions.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <set>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/output/table.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

using Reader = io::JsonReader;

// A list shown in a label: as written, a long one shortened with its length and digest
std::string shortText(const json& v) {
  std::string t = v.is_string() ? v.get<std::string>() : v.dump();
  if (t.size() > 64)  // it goes into every label: short, and still one text per list
    t = t.substr(0, 40) + "... (" + std::to_string(t.size()) + " characters, sha256 " + io::sha256Bytes(t.data(), t.size()).substr(0, 12) + ")";
  return t;
}

LayerSpec parseLayers(const json& v, const std::string& ptr, const Reader& r) {
  LayerSpec s;
  s.text = shortText(v);
  LayerSpec::Ranges ranges;
  // Kept as ranges, never expanded here: "0-1000000000" is one pair, checked against the model's
  // layer count in resolve() before a single index is made.
  auto range = [&](const std::string& t, const std::string& p) {
    const auto dash = t.find('-');
    try {
      std::size_t used = 0;
      if (dash == std::string::npos) {
        const int a = std::stoi(t, &used);
        if (used != t.size() || a < 0) throw std::invalid_argument(t);
        ranges.emplace_back(a, a);
        return;
      }
      const int a = std::stoi(t.substr(0, dash), &used);
      if (used != dash) throw std::invalid_argument(t);
      const int b = std::stoi(t.substr(dash + 1), &used);
      if (used != t.size() - dash - 1 || a < 0 || b < a) throw std::invalid_argument(t);
      ranges.emplace_back(a, b);
    } catch (const std::exception&) {
      r.fail(p, "expected a layer (\"5\") or a range (\"2-27\") with start <= end, got \"" + t + "\"");
    }
  };
  if (v.is_string()) {
    if (v == "all") return s;
    s.all = false;
    range(v.get<std::string>(), ptr);
  } else if (v.is_array()) {
    s.all = false;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = ptr + "/" + std::to_string(i);
      if (v[i].is_number_integer()) {
        const int l = static_cast<int>(r.integer(v[i], p, 0, INT_MAX));
        ranges.emplace_back(l, l);
      } else if (v[i].is_string()) range(v[i].get<std::string>(), p);
      else r.fail(p, "expected a layer index or a range string");
    }
    if (ranges.empty()) r.fail(ptr, "expected at least one layer");
  } else {
    r.fail(ptr, "expected \"all\", a range string or an array of layers");
  }
  // ascending and disjoint: overlapping and adjacent ranges merged
  std::sort(ranges.begin(), ranges.end());
  LayerSpec::Ranges merged;
  for (const auto& x : ranges)
    if (!merged.empty() && static_cast<std::int64_t>(x.first) <= static_cast<std::int64_t>(merged.back().second) + 1)
      merged.back().second = std::max(merged.back().second, x.second);
    else merged.push_back(x);
  s.ranges = std::make_shared<const LayerSpec::Ranges>(std::move(merged));
  return s;
}

std::string fmt(double v) { return output::general(v); }

}  // namespace

std::vector<int> LayerSpec::resolve(int n_layers, const std::string& pointer) const {
  // the bounds first, on the ranges: a range can name no more layers than the model has
  if (!all)
    for (const auto& [a, b] : *ranges)
      if (b >= n_layers)
        throw UsageError("manifest: " + pointer + "/layers: layer " + std::to_string(std::max(a, n_layers)) +
                         " does not exist (the model has " + std::to_string(n_layers) + " layers: 0-" +
                         std::to_string(n_layers - 1) + ")");
  std::vector<int> v;
  if (all)
    for (int i = 0; i < n_layers; ++i) v.push_back(i);
  else
    for (const auto& [a, b] : *ranges)
      for (int i = a; i <= b; ++i) v.push_back(i);
  return v;
}

json CoordinateSpec::describe() const {
  switch (kind) {
    case Coordinates::All: return "all";
    case Coordinates::Negative: return "negative";
    case Coordinates::TopK: return {{"top_k", k}};
    case Coordinates::Indices: return *indices;
  }
  return "all";
}

json Step::describe() const {
  json j = {{"op", opName(op)}, {"target", targetName(target)}, {"layers", json("all")}};
  if (!layers.all) {  // explicit indices (describe() follows resolve(): the ranges are within the model)
    json l = json::array();
    for (const auto& [a, b] : *layers.ranges)
      for (int i = a; i <= b; ++i) l.push_back(i);
    j["layers"] = l;
  }
  const OpInfo& info = opInfo(op);
  switch (info.param) {
    case ParamKind::Number: j[info.record_key] = value; break;
    case ParamKind::Mode: j[info.record_key] = mode; break;
    case ParamKind::SourceLayer: j[info.record_key] = source_layer; break;
    case ParamKind::Source:
      j[info.record_key] = {{"path", source.written}, {"sha256", source.sha256}};
      if (!source.state_key.empty()) j[info.record_key]["state_key"] = source.state_key;
      break;
    case ParamKind::None: break;
  }
  if (info.seeded) j[kSeedKey] = seed;
  if (coordinates.kind != Coordinates::All) j["coordinates"] = coordinates.describe();
  return j;
}

json Condition::describe() const {
  if (steps.size() == 1) return steps.front().describe();
  json s = json::array();
  for (const Step& x : steps) s.push_back(x.describe());
  return {{"op", "composite"}, {"steps", s}};
}

namespace {

CoordinateSpec parseCoordinates(const json& v, const std::string& ptr, const Reader& r) {
  CoordinateSpec s;
  if (v == "all") return s;
  if (v == "negative") {
    s.kind = Coordinates::Negative;
    s.text = "negative";
  } else if (v.is_object()) {
    r.object(v, ptr, {"top_k"});
    s.kind = Coordinates::TopK;
    s.k = r.integer(r.need(v, ptr, "top_k"), ptr + "/top_k", 1, std::numeric_limits<int>::max());
    s.text = "top-" + std::to_string(s.k) + " |g|";
  } else if (v.is_array() && !v.empty()) {
    std::vector<std::int64_t> idx;
    for (std::size_t i = 0; i < v.size(); ++i) idx.push_back(r.integer(v[i], ptr + "/" + std::to_string(i), 0, std::numeric_limits<int>::max()));
    std::sort(idx.begin(), idx.end());
    if (std::adjacent_find(idx.begin(), idx.end()) != idx.end()) r.fail(ptr, "a coordinate is listed twice");
    s.kind = Coordinates::Indices;
    s.indices = std::make_shared<const std::vector<std::int64_t>>(std::move(idx));
    s.text = shortText(v);
  } else {
    r.fail(ptr, "expected \"all\", \"negative\", {\"top_k\": k} or a non-empty array of coordinate indices");
  }
  return s;
}

// An entry's op, layers and coordinates, and the checks that need only its op: the parameters
// another op takes are refused.
Step parseBaseStep(const Reader& r, const json& c, const std::string& p) {
  Step base;
  base.pointer = p;
  base.op = r.choice(r.need(c, p, "op"), p + "/op", kOpNames);
  const OpInfo& info = opInfo(base.op);
  base.layers = c.contains("layers") ? parseLayers(c["layers"], p + "/layers", r) : LayerSpec{};
  if (c.contains("coordinates")) base.coordinates = parseCoordinates(c["coordinates"], p + "/coordinates", r);
  if (base.op == Op::Bypass && base.coordinates.kind != Coordinates::All)
    r.fail(p + "/coordinates", "bypass removes a whole normalisation (no RMS division, no gain): it takes no coordinates");
  if (base.op == Op::Compensate && base.coordinates.kind != Coordinates::All)
    r.fail(p + "/coordinates", "compensate scales whole vectors (Q by a, K by 1/a) so that every logit is unchanged: it takes no coordinates");
  for (const OpInfo& other : kOps)  // another op's parameter list
    if (other.list_key && c.contains(other.list_key) && !(info.list_key && std::string(info.list_key) == other.list_key))
      r.fail(p + "/" + other.list_key, std::string("not a parameter of ") + info.name);
  if (!info.seeded && c.contains(kSeedsKey)) r.fail(p + "/" + kSeedsKey, std::string("not a parameter of ") + info.name);
  return base;
}

// The pointer of value a of the entry's list `key` (the key's own when it holds a single value).
std::string valuePointer(const json& c, const std::string& p, const char* key, std::size_t a) {
  return p + "/" + key + (c.contains(key) && c[key].is_array() ? "/" + std::to_string(a) : "");
}

// The entry's targets: "qk" when it names none, and always for an op that acts on Q and K together.
std::vector<json> parseTargets(const Reader& r, const json& c, const std::string& p, const OpInfo& info) {
  std::vector<json> targets = c.contains("targets") ? r.list(c["targets"], p + "/targets") : std::vector<json>{json("qk")};
  if (info.fixed_targets) {
    if (c.contains("targets")) r.fail(p + "/targets", std::string(info.name) + " acts on Q and K together: it takes no targets");
    targets = {json("qk")};
  }
  return targets;
}

// One value of the op's parameter list (at pointer pp) into x; returns its text for the label.
std::string parseParam(const Reader& r, const OpInfo& info, const json& v, const std::string& pp, const std::string& manifest_path,
                       Step& x) {
  switch (info.param) {
    case ParamKind::Number:
      x.value = r.num(v, pp);
      if (!std::isfinite(x.value)) r.fail(pp, "expected a finite number");
      if (x.op == Op::Compensate && x.value == 0) r.fail(pp, "compensate divides the K gains by it: expected a number other than 0");
      if (x.op == Op::Noise && x.value < 0) r.fail(pp, "expected a noise level sigma >= 0");
      return fmt(x.value);
    case ParamKind::Mode:
      x.mode = r.str(v, pp);
      if (std::find_if(kSignFixModes.begin(), kSignFixModes.end(), [&](const char* m) { return x.mode == m; }) == kSignFixModes.end())
        r.fail(pp, std::string("expected ") + kSignFixModes[0] + " or " + kSignFixModes[1] + ", got \"" + x.mode + "\"");
      return x.mode;
    case ParamKind::SourceLayer:
      x.source_layer = static_cast<int>(r.integer(v, pp, 0, std::numeric_limits<int>::max()));
      return std::to_string(x.source_layer);
    case ParamKind::Source: {  // another checkpoint (an earlier step, the initial weights), verified
      const json& so = r.object(v, pp, {"path", "sha256", "state_key"});
      x.source.written = r.str(r.need(so, pp, "path"), pp + "/path");
      x.source.path = io::resolveAgainst(x.source.written, manifest_path);
      x.source.sha256 = io::normaliseSha256(r.str(r.need(so, pp, "sha256"), pp + "/sha256"), r.label() + ": " + pp + "/sha256");
      if (const json* k = r.opt(so, "state_key")) x.source.state_key = r.str(*k, pp + "/state_key");
      return x.source.written + (x.source.state_key.empty() ? "" : " [" + x.source.state_key + "]");
    }
    case ParamKind::None: break;
  }
  return "";
}

// One manifest entry expanded over its lists (values x seeds x targets), in that order.
std::vector<Step> parseEntry(const Reader& r, const json& c, const std::string& p, const std::string& manifest_path) {
  const Step base = parseBaseStep(r, c, p);
  const OpInfo& info = opInfo(base.op);
  // one parameter list: its values
  auto list = [&](const char* key) { return key ? r.list(r.need(c, p, key), p + "/" + key) : std::vector<json>{json()}; };
  const std::vector<json> params = list(info.list_key);
  const std::vector<json> seeds = list(info.seeded ? kSeedsKey : nullptr);
  const std::vector<json> targets = parseTargets(r, c, p, info);
  // the size before the expansion: each condition is a full evaluation pass
  const double n = static_cast<double>(params.size()) * static_cast<double>(seeds.size()) * static_cast<double>(targets.size());
  if (n > static_cast<double>(kMaxConditions))
    r.fail(p, "expands into " + output::wholeNumber(n) + " conditions (values x seeds x targets), more than the " +
                  std::to_string(kMaxConditions) + " one manifest may hold: split it, or shard the sweep");
  std::vector<Step> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::size_t a = 0; a < params.size(); ++a)
    for (std::size_t e = 0; e < seeds.size(); ++e)
      for (std::size_t t = 0; t < targets.size(); ++t) {
        Step x = base;
        x.target = r.choice(targets[t], valuePointer(c, p, "targets", t), kTargets);
        const std::string pp = info.list_key ? valuePointer(c, p, info.list_key, a) : p;
        std::string param_text = parseParam(r, info, params[a], pp, manifest_path, x);
        if (!param_text.empty()) param_text = std::string(" ") + (*info.label_word ? std::string(info.label_word) + " " : "") + param_text;
        if (info.seeded) {
          x.seed = static_cast<std::uint64_t>(r.integer(seeds[e], valuePointer(c, p, kSeedsKey, e), 0, std::numeric_limits<int>::max()));
          param_text += std::string(" ") + kSeedKey + " " + std::to_string(x.seed);
        }
        x.label = std::string(opName(x.op)) + param_text + " " + targetName(x.target) + " " + (x.layers.all ? "all" : x.layers.text) +
                  (x.coordinates.kind == Coordinates::All ? "" : " coords " + x.coordinates.text);
        out.push_back(std::move(x));
      }
  return out;
}

// An entry's reported perplexities, one per condition it expands to (in expansion order; null for
// none): a number, or a list of that length. They need /reported (where they come from).
std::vector<std::optional<double>> reportedValues(const Reader& r, const json& c, const std::string& p, std::size_t n, const Manifest& m,
                                                  bool reported_failed) {
  std::vector<std::optional<double>> out(n);
  const json* v = r.opt(c, "reported_perplexity");
  if (!v) return out;
  const std::string ptr = p + "/reported_perplexity";
  if (!m.reported && !reported_failed) r.fail(ptr, "needs /reported: say where the reported values come from");
  if (v->is_array() && v->size() != n)
    r.fail(ptr, "expected " + std::to_string(n) + " values, one per condition the entry expands to, got " + std::to_string(v->size()));
  if (!v->is_array() && n != 1) r.fail(ptr, "the entry expands to " + std::to_string(n) + " conditions: give a list of " + std::to_string(n));
  for (std::size_t k = 0; k < n; ++k) {
    const json& x = v->is_array() ? (*v)[k] : *v;
    const std::string xp = v->is_array() ? ptr + "/" + std::to_string(k) : ptr;
    if (x.is_null()) continue;
    const double d = r.num(x, xp);
    if (!(d > 0) || !std::isfinite(d)) r.fail(xp, "expected a perplexity > 0");
    out[k] = d;
  }
  return out;
}

// The manifest's conditions as they are added: numbered in order, labels unique, the total capped.
// Past the cap, the entry that passes it is the one error (later entries are still read for their
// own mistakes, not added). `reported_failed`: /reported had a mistake, so a condition's reported
// perplexity is not also refused for wanting it.
class ConditionList {
 public:
  ConditionList(const Reader& r, Manifest& m, bool reported_failed) : reported_failed(reported_failed), r_(r), m_(m) {}
  void add(Condition x, const std::string& p) {
    if (capped_) return;
    if (m_.conditions.size() >= kMaxConditions) {
      capped_ = true;
      r_.fail(p, "brings the manifest past " + std::to_string(kMaxConditions) + " conditions: split it, or shard the sweep");
    }
    if (!labels_.insert(x.label).second) r_.fail(p, "duplicates the condition \"" + x.label + "\"");
    x.id = "c" + std::to_string(m_.conditions.size());
    m_.conditions.push_back(std::move(x));
  }

  const bool reported_failed;

 private:
  const Reader& r_;
  Manifest& m_;
  std::set<std::string> labels_;
  bool capped_ = false;
};

// A composite entry ("steps"): one condition whose steps each name one value per list.
void parseComposite(const Reader& r, const json& c, const std::string& p, Manifest& m, ConditionList& out) {
  if (c.contains("op")) r.fail(p + "/op", "a composite condition takes its ops in /steps, not beside them");
  r.object(c, p, {"name", "steps", "reported_perplexity"});
  const json& st = c["steps"];
  if (!st.is_array() || st.empty()) r.fail(p + "/steps", "expected a non-empty array of ops, applied in order");
  Condition x;
  x.pointer = p;
  for (std::size_t k = 0; k < st.size(); ++k) {
    const std::string sp = p + "/steps/" + std::to_string(k);
    const json& e = r.object(st[k], sp, {"op", "values", "targets", "layers", "seeds", "modes", "source_layers", "sources", "coordinates"});
    std::vector<Step> one = parseEntry(r, e, sp, m.path);
    if (one.size() != 1) r.fail(sp, "a step is one op: give one value per list (it expands to " + std::to_string(one.size()) + ")");
    x.label += (k ? "; " : "") + one.front().label;
    x.steps.push_back(std::move(one.front()));
  }
  if (const json* n = r.opt(c, "name")) x.label = r.str(*n, p + "/name");
  x.reported_perplexity = reportedValues(r, c, p, 1, m, out.reported_failed).front();
  out.add(std::move(x), p);
}

// A single-op entry: one condition per combination of its lists.
void parseSingle(const Reader& r, const json& entry, const std::string& p, Manifest& m, ConditionList& out) {
  const json& c = r.object(entry, p, {"op", "name", "values", "targets", "layers", "seeds", "modes", "source_layers", "sources",
                                      "coordinates", "reported_perplexity"});
  const std::vector<Step> steps = parseEntry(r, c, p, m.path);
  const std::vector<std::optional<double>> reported = reportedValues(r, c, p, steps.size(), m, out.reported_failed);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const Step& s = steps[k];
    Condition x;
    x.pointer = p;
    x.label = s.label;
    x.reported_perplexity = reported[k];
    if (c.contains("name")) {
      const std::string n = r.str(c["name"], p + "/name");
      x.label = steps.size() > 1 ? n + " [" + s.label + "]" : n;
    }
    x.steps = {s};
    out.add(std::move(x), p);
  }
}

}  // namespace

namespace detail {

void parseReported(const Reader& r, const json& j, Manifest& m) {
  const json* rep = r.opt(j, "reported");
  if (!rep) return;
  r.object(*rep, "/reported", {"source", "control_perplexity"});
  const std::string source = r.str(r.need(*rep, "/reported", "source"), "/reported/source");
  if (source.empty()) r.fail("/reported/source", "must not be empty");
  m.reported = documents::ReportedSource{source, std::nullopt};
  if (const json* v = r.opt(*rep, "control_perplexity")) {
    const double d = r.num(*v, "/reported/control_perplexity");
    if (!(d > 0) || !std::isfinite(d)) r.fail("/reported/control_perplexity", "expected a perplexity > 0");
    m.reported->control_perplexity = d;
  }
}

// Each entry expands over its lists, in manifest order; an entry's mistakes are kept in
// `errors` and the next entry is read.
void parseConditions(const Reader& r, const json& j, Manifest& m, bool reported_failed, io::ErrorList& errors) {
  const json& cs = r.need(j, "", "conditions");
  if (!cs.is_array() || cs.empty()) r.fail("/conditions", "expected a non-empty array of conditions");
  ConditionList out(r, m, reported_failed);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const std::string p = "/conditions/" + std::to_string(i);
    errors.check([&] {
      if (cs[i].is_object() && cs[i].contains("steps")) parseComposite(r, cs[i], p, m, out);
      else parseSingle(r, cs[i], p, m, out);
    });
  }
}

}  // namespace detail
}  // namespace omn::intervene
