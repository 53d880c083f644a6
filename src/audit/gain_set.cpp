#include "omn/audit/gain_set.h"

#include <regex>
#include <set>

#include "omn/errors.h"

namespace omn::audit {

std::size_t GainSet::count() const {
  std::size_t n = 0;
  for (const auto& v : vectors) n += v.values.size();
  return n;
}

namespace {

// Layer indices for which a tensor matching the per-layer pattern exists.
std::set<int> layersPresent(const io::TensorIndex& index, const std::string& pattern) {
  const auto pos = pattern.find("{i}");
  const std::string pre = pattern.substr(0, pos), post = pattern.substr(pos + 3);
  std::set<int> out;
  for (const auto& t : index.tensors()) {
    const std::string& n = t.name;
    if (n.size() <= pre.size() + post.size() || n.compare(0, pre.size(), pre) != 0 ||
        n.compare(n.size() - post.size(), post.size(), post) != 0)
      continue;
    const std::string mid = n.substr(pre.size(), n.size() - pre.size() - post.size());
    if (mid.empty() || mid.size() > 6 || mid.find_first_not_of("0123456789") != std::string::npos) continue;
    out.insert(std::stoi(mid));
  }
  return out;
}

}  // namespace

GainSet loadGains(const io::Checkpoint& ck, const model::Preset& preset) {
  GainSet g;
  g.preset = preset.name;
  g.parametrisation = preset.parametrisation;
  g.layout = preset.layout;
  g.rope_style = preset.archString("rope_style", "rotate_half");
  const std::set<int> q = layersPresent(ck.index, preset.tensors.at("q_norm"));
  const std::set<int> k = layersPresent(ck.index, preset.tensors.at("k_norm"));
  if (q.empty())
    throw FormatError(ck.path + ": no Q/K gain tensors named like '" + preset.tensors.at("q_norm") + "' (preset " +
                      preset.name + "): nothing to profile (a model trained without QK-norm has no gains)");
  const int n = *q.rbegin() + 1;
  for (int i = 0; i < n; ++i) {
    if (!q.count(i)) throw FormatError(ck.path + ": tensor '" + preset.tensorName("q_norm", i) + "' is missing (layers run 0.." +
                                       std::to_string(n - 1) + ")");
    if (!k.count(i)) throw FormatError(ck.path + ": tensor '" + preset.tensorName("k_norm", i) + "' is missing");
  }
  if (!k.empty() && *k.rbegin() >= n)
    throw FormatError(ck.path + ": tensor '" + preset.tensorName("k_norm", *k.rbegin()) + "' has no matching Q gain");
  if (auto want = preset.archInt("n_layers"); want && *want != n)
    throw FormatError(ck.path + ": " + preset.archSource("n_layers") + " expects " + std::to_string(*want) +
                      " layers, the checkpoint has Q/K gains for " + std::to_string(n));
  g.n_layers = n;

  const auto head_dim = preset.archInt("head_dim");
  for (int i = 0; i < n; ++i) {
    for (Role role : {Role::Q, Role::K}) {
      const std::string name = preset.tensorName(role == Role::Q ? "q_norm" : "k_norm", i);
      const io::TensorRef& t = ck.index.at(name);
      if (t.shape.size() != 1)
        throw FormatError(ck.path + ": tensor '" + name + "': expected a 1-D gain vector, got shape " + io::shapeString(t.shape));
      if (!io::isFloatingPoint(t.dtype))
        throw FormatError(ck.path + ": tensor '" + name + "': expected a floating-point gain, got " + io::dtypeName(t.dtype));
      const std::int64_t len = t.shape[0];
      if (preset.layout == model::GainLayout::Head) {
        if (head_dim && len != *head_dim)
          throw FormatError(ck.path + ": tensor '" + name + "': expected shape [" + std::to_string(*head_dim) +
                            "] (head_dim of " + preset.archSource("head_dim") + "), got " + io::shapeString(t.shape));
        if (g.head_dim == 0) g.head_dim = len;
        else if (len != g.head_dim)
          throw FormatError(ck.path + ": tensor '" + name + "': expected shape [" + std::to_string(g.head_dim) +
                            "] like the other gains, got " + io::shapeString(t.shape));
      } else {
        const std::int64_t hd = head_dim.value_or(0);
        if (hd <= 0 || len % hd != 0)
          throw FormatError(ck.path + ": tensor '" + name + "': length " + std::to_string(len) +
                            " is not a multiple of head_dim " + std::to_string(hd) + " (preset " + preset.name + ")");
        g.head_dim = hd;
      }
      GainVector v;
      v.layer = i;
      v.role = role;
      v.tensor = name;
      v.dtype = t.dtype;
      v.values = io::readAsDouble(t);
      if (preset.parametrisation == model::GainParametrisation::OnePlus)
        for (double& x : v.values) x += 1.0;
      g.vectors.push_back(std::move(v));
    }
  }
  if (g.head_dim % 2 != 0)
    throw FormatError(ck.path + ": head_dim " + std::to_string(g.head_dim) + " is odd: RoPE needs pairs");
  return g;
}

}  // namespace omn::audit
