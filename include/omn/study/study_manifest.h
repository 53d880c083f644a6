// A training study (omn-audit/study-manifest@1): a base training config, an optional JSON merge
// patch on it, and a grid — QK-norm on/off × learning rates × seeds, optionally × depth × optimizer.
// Parsed once, strictly, into the list of cells; each cell's training config is built and validated
// here (by the trainer's own parser) before anything runs. No libtorch. docs/study.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/train/train_config.h"

namespace omn::study {

// One training run of the grid.
struct Cell {
  std::size_t index = 0;
  std::string id;   // "qk-on_lr-1.000e-03_seed-0" (+ "_layers-4", "_adamw" when those axes are swept)
  std::string arm;  // the cell's arm: everything but the learning rate and the seed ("qk-on", "qk-off L4 adamw")
  bool qk_norm = true;
  double lr = 0;                  // AdamW's learning rate (/optimizer/lr)
  std::optional<double> muon_lr;  // Muon's, scaled with lr (the base config's ratio kept)
  std::uint64_t seed = 0;
  int n_layers = 0;
  std::string optimizer;          // "adamw" | "muon+adamw"
  nlohmann::json config;          // the cell's training config, as written to <runs>/<id>.config.json
};

struct StudyManifest {
  std::string path, sha256, verbatim;  // the file, the SHA-256 of its exact bytes, the bytes
  std::string description;
  std::string base_path, base_sha256;  // the base training config
  std::string corpus;                  // resolved: the manifest's /corpus or the base config's
  double confidence = 0.95;            // of the intervals over seeds (/confidence)
  std::vector<double> lrs;             // ascending
  std::vector<std::string> arms;       // in grid order
  std::vector<Cell> cells;             // arms × lrs × seeds, in that order
  std::string output_json, output_csv, runs_dir;  // resolved against the manifest
};

// The most cells (training runs) one manifest may expand into; larger grids are refused at /grid.
constexpr std::size_t kMaxStudyCells = 10000;

// Where /output's paths go: beside the manifest as written (a user's manifest), or their file names in
// the current directory (a manifest that ships with the tool, named by name: never into the installation).
enum class OutputPlacement { AsWritten, CurrentDirectory };

StudyManifest loadStudyManifest(const std::string& path, OutputPlacement outputs = OutputPlacement::AsWritten);
StudyManifest parseStudyManifest(const nlohmann::json& j, const std::string& path, const std::string& sha256,
                                 const std::string& verbatim, OutputPlacement outputs = OutputPlacement::AsWritten);

// The cells of shard i of N (cell k belongs to shard k mod N).
std::vector<Cell> shardCells(const std::vector<Cell>& cells, int index, int count);

}  // namespace omn::study
