// The intervention manifest (omn-audit/manifest@1, docs/manifest.md): strict parsing — an unknown
// key, a wrong type or an impossible value is a UsageError naming the JSON pointer — and the
// expansion of sweeps into a flat, ordered list of conditions. No libtorch.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/intervention_document.h"
#include "omn/eval/bootstrap.h"
#include "omn/eval/session_spec.h"
#include "omn/intervene/op_catalog.h"

namespace omn::intervene {


enum class Target { Q, K, QK };
inline constexpr std::array<io::Named<Target>, 3> kTargets{{{"q", Target::Q}, {"k", Target::K}, {"qk", Target::QK}}};
inline const char* targetName(Target t) { return io::choiceName(kTargets, t); }

struct LayerSpec {
  bool all = true;
  using Ranges = std::vector<std::pair<int, int>>;
  // inclusive, ascending, disjoint, when !all; never expanded, and shared by the conditions one
  // manifest entry expands into (a long list times many values must not be copied each time)
  std::shared_ptr<const Ranges> ranges = std::make_shared<const Ranges>();
  std::string text;  // as written: "all", "0-1", "[0, 5, \"10-12\"]"; a long list shortened, with its digest
  // The layers, ascending; UsageError naming the pointer when a range reaches past n_layers
  // (checked before anything is expanded: "0-1000000000" costs nothing).
  std::vector<int> resolve(int n_layers, const std::string& pointer) const;
};

// Which coordinates of each targeted vector a step acts on, chosen on the vector's values when the
// step runs: all, the negative ones, the k largest |g| (ties: the lower index first), or an explicit
// index list. The op sees only the chosen coordinates, as if the vector were just those (vector_mean
// is their mean, permute shuffles among them); the others keep their values.
enum class Coordinates { All, Negative, TopK, Indices };
struct CoordinateSpec {
  Coordinates kind = Coordinates::All;
  std::int64_t k = 0;  // TopK
  std::shared_ptr<const std::vector<std::int64_t>> indices = std::make_shared<const std::vector<std::int64_t>>();  // ascending, distinct
  std::string text;    // as labelled: "negative", "top-3 |g|", "[0, 5]"
  nlohmann::json describe() const;
};

// One op on the gains: what a plain manifest entry expands into, and one element of a composite.
struct Step {
  Op op = Op::Constant;
  Target target = Target::QK;
  LayerSpec layers;
  CoordinateSpec coordinates;
  // the op's swept parameter, in the field its ParamKind names (op_catalog.h), and a seeded op's seed
  double value = 0;          // Number: constant c, scale α, rescale_pattern c, compensate α, noise σ
  std::uint64_t seed = 0;    // seeded ops: permute, noise
  std::string mode;          // Mode: sign_fix zero | abs
  int source_layer = -1;     // SourceLayer: copy_layer
  struct Source {
    std::string path, sha256, state_key;  // path resolved against the manifest; its digest is verified before use
    std::string written;                  // the path as the manifest wrote it (labels, records)
  } source;                               // Source: transplant
  std::string label;         // "constant 2 qk all", "noise 0.1 seed 3 q 0-1 coords negative"
  std::string pointer;       // the manifest entry it came from ("/conditions/3", "/conditions/4/steps/1")
  nlohmann::json describe() const;  // the step as recorded in results
};

struct Condition {
  std::string id;     // "c0", "c1", ... in manifest order
  std::string label;  // the manifest's name, or the steps' labels joined with "; "
  std::string pointer;  // JSON pointer of the entry that produced it ("/conditions/3")
  std::vector<Step> steps;  // applied in order, each to the values the one before left
  std::optional<double> reported_perplexity;  // a value reported elsewhere (the historical record), shown beside the measured one
  // As recorded in results: one step is the step's record ({"op", "target", "layers", ...}); a
  // composite is {"op": "composite", "steps": [...]}.
  nlohmann::json describe() const;
};

// The most conditions one manifest may expand into (each is a full evaluation pass); more is refused
// at the entry that passes it, before anything is expanded further.
constexpr std::size_t kMaxConditions = 100000;

struct Manifest {
  std::string path, sha256;
  std::string bytes;         // the file exactly as read (its SHA-256 is `sha256`); empty when parsed from memory
  nlohmann::json verbatim;
  eval::SessionSpec session;  // checkpoint, tokens, rows, model
  eval::BootstrapSpec bootstrap;
  int groups = eval::kDefaultGroups;
  bool groups_given = false;  // /groups absent: the default, or every row where fewer are scored (eval::resolveGroups)
  std::vector<Condition> conditions;
  std::string output_json, output_csv;  // resolved against the manifest's directory
  // /reported: where reported values come from and the control's reported perplexity (empty: none)
  std::optional<documents::ReportedSource> reported;
  double noise_floor = -1;  // /model/noise_floor, nats/token (< 0: the working dtype's default)
  bool confirm_fp32 = false;  // /model/confirm_fp32: conditions below the noise floor run again in fp32
  std::size_t family_size = 0;  // multiplicity's m when not every condition is here (the fp32 arm); 0: conditions.size()
};

// Reads, hashes and validates; relative paths resolve against the manifest's directory.
// `allow_unverified`: a checkpoint without sha256 is accepted (recorded as unverified).
Manifest loadManifest(const std::string& path, bool allow_unverified);
Manifest parseManifest(const nlohmann::json& j, const std::string& path, const std::string& sha256, bool allow_unverified);

// The fp32 confirmation arm (/model/confirm_fp32): the manifest with dtype fp32 and only the
// conditions a result flags below_noise_floor (their ids kept); nothing when there is none.
std::optional<Manifest> confirmationManifest(const Manifest& m, const documents::InterventionDocument& result);
// Every file the manifest makes the run read: the manifest itself, its session's inputs
// (eval::sessionInputFiles: the checkpoint, the tokens, their record and offsets, a preset file),
// each transplant source. No output may be one of them.
std::vector<std::string> inputFiles(const Manifest& m);

// Where it writes: OUT.json -> OUT.fp32.json
std::string confirmationPath(const std::string& out);

// Shard i of n (0-based): conditions k with k mod n == i, in order.
std::vector<Condition> shardConditions(const std::vector<Condition>& all, int index, int count);

}  // namespace omn::intervene
