// Configs that ship with omn-audit, by name: `intervene --manifest tiny-demo`, `study --manifest
// qk-lr-tiny`, `train --config tiny`, `corpus --config sotu`. A value that names an existing file,
// holds a '/' or ends in ".json" is a path, as always; any other is looked up as
// configs/KIND/NAME.json in the data directories, first found wins:
//   $OMN_AUDIT_DATA, then share/omn-audit beside the executable (a build tree), then
//   ../share/omn-audit (cmake --install).
// The file is returned by its real path, so the paths inside it (the demo model, a base config)
// resolve where it lies. A config given by name writes its default outputs (a manifest's /output)
// into the current directory under their file names, never into the installation (outputInCwd).
#pragma once
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "omn/errors.h"

namespace omn::cli {

struct ConfigArgument {
  std::string path;
  bool by_name = false;
};

inline std::vector<std::filesystem::path> dataDirectories() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("OMN_AUDIT_DATA"); env && *env) dirs.emplace_back(env);
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    const std::filesystem::path dir = std::filesystem::path(std::string(exe, static_cast<std::size_t>(n))).parent_path();
    dirs.push_back(dir / "share" / "omn-audit");
    dirs.push_back(dir.parent_path() / "share" / "omn-audit");
  }
  return dirs;
}

// `kind`: the folder under configs/ ("manifests", "studies", "train", "corpus"); `flag` names the
// option in messages.
inline ConfigArgument locateConfig(const std::string& value, const std::string& kind, const std::string& flag) {
  std::error_code ec;
  const bool path_like = value.find('/') != std::string::npos ||
                         (value.size() >= 5 && value.compare(value.size() - 5, 5, ".json") == 0) || value.empty() ||
                         value == "." || value == ".." || std::filesystem::exists(value, ec);
  if (path_like) return {value, false};
  std::set<std::string> shipped;
  for (const auto& d : dataDirectories()) {
    const std::filesystem::path folder = d / "configs" / kind;
    const std::filesystem::path file = folder / (value + ".json");
    if (std::filesystem::is_regular_file(file, ec)) return {std::filesystem::canonical(file, ec).string(), true};
    for (const auto& e : std::filesystem::directory_iterator(folder, ec))
      if (e.path().extension() == ".json" && std::filesystem::is_regular_file(e.path(), ec)) shipped.insert(e.path().stem().string());
  }
  const std::string what = kind == "manifests" ? "sweep manifest" : kind == "studies" ? "study manifest"
                           : kind == "train"   ? "training config" : kind + " config";
  std::string names;
  for (const auto& s : shipped) names += (names.empty() ? "" : ", ") + s;
  throw UsageError(flag + " " + value + ": no such file, and " +
                   (shipped.empty() ? "no configs ship with this omn-audit (no share/omn-audit beside it; OMN_AUDIT_DATA sets the folder)"
                                    : "no " + what + " of that name ships with omn-audit (" + names + ")"));
}

// Where a config given by name writes a default output: the file name, in the current directory.
inline std::string outputInCwd(const std::string& path) {
  return path.empty() ? path : std::filesystem::path(path).filename().string();
}

}  // namespace omn::cli
