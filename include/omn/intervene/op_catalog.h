// Every intervention op, defined once: its manifest name, the parameter it sweeps (the manifest
// key, the key it is recorded under, its kind), how its label reads and whether it takes targets.
// The manifest parser, the labels, the recorded op and the error messages all read this table;
// GainState::apply (ops.cpp, libtorch) holds the one computation per op. A new op is one row here,
// one case there, its schema entry (docs/schema/manifest.schema.json) and its test against the
// Python reference (tests/parity/check_interventions.py). No libtorch.
#pragma once
#include <array>
#include <cstddef>
#include <utility>

#include "omn/io/choice.h"

namespace omn::intervene {

enum class Op { Constant, Scale, VectorMean, GlobalMean, Permute, SignFix, CopyLayer, SwapQK, RescalePattern, Compensate, Noise, Transplant, Bypass };

// What an op's swept parameter is: none, a finite number (Step::value), a sign_fix mode
// (::mode), a layer index (::source_layer) or another checkpoint ({path, sha256}: ::source). A
// seeded op also sweeps "seeds" (::seed, < 2^31).
enum class ParamKind { None, Number, Mode, SourceLayer, Source };

struct OpInfo {
  Op op;
  const char* name;        // the manifest's "op" and the recorded op
  ParamKind param;
  const char* list_key;    // the manifest key listing the swept values ("values"); nullptr: none
  const char* record_key;  // the key of one value in the recorded op ("value"); nullptr: none
  const char* label_word;  // before the value in the label: "constant 2", "copy_layer from 5"
  bool fixed_targets;      // acts on Q and K together; "targets" is refused (swap_qk, compensate)
  bool seeded;             // also sweeps "seeds", recorded as "seed", labelled "seed 3" (permute, noise)
};

inline constexpr std::array<OpInfo, 13> kOps{{
    {Op::Constant, "constant", ParamKind::Number, "values", "value", "", false, false},
    {Op::Scale, "scale", ParamKind::Number, "values", "value", "", false, false},
    {Op::VectorMean, "vector_mean", ParamKind::None, nullptr, nullptr, "", false, false},
    {Op::GlobalMean, "global_mean", ParamKind::None, nullptr, nullptr, "", false, false},
    {Op::Permute, "permute", ParamKind::None, nullptr, nullptr, "", false, true},
    {Op::SignFix, "sign_fix", ParamKind::Mode, "modes", "mode", "", false, false},
    {Op::CopyLayer, "copy_layer", ParamKind::SourceLayer, "source_layers", "source_layer", "from", false, false},
    {Op::SwapQK, "swap_qk", ParamKind::None, nullptr, nullptr, "", true, false},
    {Op::RescalePattern, "rescale_pattern", ParamKind::Number, "values", "value", "", false, false},
    {Op::Compensate, "compensate", ParamKind::Number, "values", "value", "", true, false},
    {Op::Noise, "noise", ParamKind::Number, "values", "value", "", false, true},
    {Op::Transplant, "transplant", ParamKind::Source, "sources", "source", "from", false, false},
    {Op::Bypass, "bypass", ParamKind::None, nullptr, nullptr, "", false, false},
}};

// The key a seeded op sweeps, and the key one seed is recorded under
inline constexpr const char* kSeedsKey = "seeds";
inline constexpr const char* kSeedKey = "seed";

// sign_fix's modes: negative gains set to zero, or to their absolute value
inline constexpr std::array<const char*, 2> kSignFixModes{"zero", "abs"};

namespace detail {
template <std::size_t... I>
constexpr std::array<io::Named<Op>, sizeof...(I)> opNames(std::index_sequence<I...>) {
  return {{{kOps[I].name, kOps[I].op}...}};
}
}  // namespace detail

// The ops' names as a choice table (io/choice.h), for the parser and its messages.
inline constexpr auto kOpNames = detail::opNames(std::make_index_sequence<kOps.size()>{});

constexpr const OpInfo& opInfo(Op op) {
  for (const OpInfo& i : kOps)
    if (i.op == op) return i;
  return kOps[0];  // unreachable: every Op has a row (static_assert below)
}
constexpr bool everyOpHasOneRow() {
  for (std::size_t k = 0; k < kOps.size(); ++k)
    if (static_cast<std::size_t>(kOps[k].op) != k) return false;
  return true;
}
static_assert(everyOpHasOneRow(), "kOps: one row per Op, in the enum's order");

inline const char* opName(Op op) { return opInfo(op).name; }

}  // namespace omn::intervene
