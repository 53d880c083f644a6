// The Q/K gains of a checkpoint, found through a preset: one vector per layer and role, with the
// effective values (1+w for one_plus presets) as float64, read exactly from the stored bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "omn/io/checkpoint.h"
#include "omn/model/preset.h"

namespace omn::audit {

enum class Role { Q, K };
inline const char* roleName(Role r) { return r == Role::Q ? "q" : "k"; }

struct GainVector {
  int layer = 0;
  Role role = Role::Q;
  std::string tensor;      // the checkpoint name
  io::DType dtype = io::DType::F32;
  std::vector<double> values;  // effective gains
};

struct GainSet {
  std::string preset;
  model::GainParametrisation parametrisation = model::GainParametrisation::Direct;
  model::GainLayout layout = model::GainLayout::Head;
  std::int64_t head_dim = 0;  // the RoPE unit: pairs are taken within each head_dim chunk
  std::string rope_style = "rotate_half";
  int n_layers = 0;
  std::vector<GainVector> vectors;  // layer-major: (0,q), (0,k), (1,q), ...

  const GainVector& at(int layer, Role role) const { return vectors[static_cast<std::size_t>(layer * 2 + (role == Role::K))]; }
  std::size_t count() const;
};

// Finds every layer's q_norm and k_norm; checks shapes against the preset (a mismatch names the
// tensor, the expected and the actual shape) and that layers run 0..n-1 without gaps.
GainSet loadGains(const io::Checkpoint& ck, const model::Preset& preset);

}  // namespace omn::audit
