#include "omn/study/study_manifest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "omn/data/corpus.h"
#include "omn/errors.h"
#include "omn/output/table.h"
#include "omn/io/json_document.h"
#include "omn/io/error_list.h"
#include "omn/io/json_reader.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"

namespace omn::study {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string lrLabel(double lr) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3e", lr);
  return b;
}

// The learning rates of /grid/lr: an explicit list, or {"from", "to", "points"} log-spaced.
std::vector<double> parseLrs(const io::JsonReader& r, const json& v) {
  std::vector<double> lrs;
  if (v.is_array()) {
    if (v.empty()) r.fail("/grid/lr", "expected a non-empty array of learning rates");
    for (std::size_t i = 0; i < v.size(); ++i) lrs.push_back(r.num(v[i], "/grid/lr/" + std::to_string(i), 0, 100, true));
  } else {
    r.object(v, "/grid/lr", {"from", "to", "points"});
    const double from = r.num(r.need(v, "/grid/lr", "from"), "/grid/lr/from", 0, 100, true);
    const double to = r.num(r.need(v, "/grid/lr", "to"), "/grid/lr/to", 0, 100, true);
    const auto n = r.integer(r.need(v, "/grid/lr", "points"), "/grid/lr/points", 1, 1000);
    if (to < from) r.fail("/grid/lr/to", "expected to >= from");
    if (n > 1 && to == from) r.fail("/grid/lr/points", "several points between equal from and to");
    for (std::int64_t i = 0; i < n; ++i)
      lrs.push_back(n == 1 ? from : std::exp(std::log(from) + (std::log(to) - std::log(from)) * static_cast<double>(i) / static_cast<double>(n - 1)));
  }
  std::vector<double> sorted = lrs;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) r.fail("/grid/lr", "a learning rate appears twice");
  return sorted;
}

// The base training config with /set applied; the corpus (the manifest's, else the base config's,
// resolved where each was written); /init/from made absolute (the cells' configs live elsewhere).
json parseBase(const io::JsonReader& r, const json& j, const std::string& path, StudyManifest& m) {
  m.base_path = io::resolveAgainst(r.str(r.need(j, "", "base"), "/base"), path);
  json base = output::readJsonFile(m.base_path, "base training config (/base of " + path + ")");
  m.base_sha256 = io::sha256File(m.base_path);
  if (const json* v = r.opt(j, "set")) {
    r.object(*v, "/set", {"name", "init", "model", "optimizer", "schedule", "clip_grad_norm", "steps", "batch_size", "seq_len",
                          "log_every", "eval", "checkpoint_every", "loss_thresholds", "dtype", "device"});
    base.merge_patch(*v);  // RFC 7386: objects merge, null removes, anything else replaces
  }
  if (const json* v = r.opt(j, "corpus")) m.corpus = io::resolveAgainst(r.str(*v, "/corpus"), path);
  else if (base.contains("corpus") && base["corpus"].is_string())
    m.corpus = io::resolveAgainst(base["corpus"].get<std::string>(), m.base_path);
  else r.fail("/base", "the base config has no /corpus and the manifest gives none");
  if (base.contains("init") && base["init"].is_object() && base["init"].contains("from") && base["init"]["from"].is_string())
    base["init"]["from"] = fs::absolute(io::resolveAgainst(base["init"]["from"].get<std::string>(), m.base_path)).lexically_normal().string();
  return base;
}

// The grid's axes; an axis the manifest leaves out holds one value, the base config's.
struct StudyGrid {
  std::vector<bool> qk;
  std::vector<std::uint64_t> seeds;
  std::vector<int> depths;               // 0: the base config's
  std::vector<std::string> optimizers;   // "": the base config's
  bool sweep_depth = false, sweep_opt = false;
};

StudyGrid parseGrid(const io::JsonReader& r, const json& j, const json& base, StudyManifest& m) {
  const json& g = r.need(j, "", "grid");
  r.object(g, "/grid", {"qk_norm", "lr", "seeds", "n_layers", "optimizer"});
  StudyGrid grid;
  const auto qk = r.list(r.need(g, "/grid", "qk_norm"), "/grid/qk_norm");
  for (std::size_t i = 0; i < qk.size(); ++i)
    grid.qk.push_back(r.boolean(qk[i], g["qk_norm"].is_array() ? "/grid/qk_norm/" + std::to_string(i) : "/grid/qk_norm"));
  m.lrs = parseLrs(r, r.need(g, "/grid", "lr"));
  if (const json* v = r.opt(g, "seeds")) {
    const auto l = r.list(*v, "/grid/seeds");
    for (std::size_t i = 0; i < l.size(); ++i) grid.seeds.push_back(static_cast<std::uint64_t>(r.integer(l[i], "/grid/seeds/" + std::to_string(i), 0)));
  } else {
    grid.seeds.push_back(base.contains("seed") && base["seed"].is_number_unsigned() ? base["seed"].get<std::uint64_t>() : 0);
  }
  grid.sweep_depth = r.opt(g, "n_layers") != nullptr;
  if (grid.sweep_depth) {
    const auto l = r.list(g["n_layers"], "/grid/n_layers");
    for (std::size_t i = 0; i < l.size(); ++i) grid.depths.push_back(static_cast<int>(r.integer(l[i], "/grid/n_layers/" + std::to_string(i), 1, 1024)));
  } else {
    grid.depths.push_back(0);
  }
  grid.sweep_opt = r.opt(g, "optimizer") != nullptr;
  if (grid.sweep_opt) {
    const auto l = r.list(g["optimizer"], "/grid/optimizer");
    for (std::size_t i = 0; i < l.size(); ++i)
      grid.optimizers.push_back(train::optimizerName(r.choice(l[i], "/grid/optimizer/" + std::to_string(i), train::kOptimizerKinds)));
  } else {
    grid.optimizers.push_back("");
  }
  for (const auto* axis : {"qk_norm", "seeds", "n_layers", "optimizer"}) {
    if (!g.contains(axis) || !g[axis].is_array()) continue;
    std::vector<std::string> seen;
    for (const auto& v : g[axis]) seen.push_back(v.dump());
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) r.fail(std::string("/grid/") + axis, "a value appears twice");
  }
  return grid;
}

void parseOutputs(const io::JsonReader& r, const json& j, const std::string& path, OutputPlacement placement, StudyManifest& m) {
  const json& o = r.need(j, "", "output");
  r.object(o, "/output", {"json", "csv", "runs"});
  auto place = [&](const std::string& p) {
    return placement == OutputPlacement::CurrentDirectory ? fs::path(p).filename().string() : io::resolveAgainst(p, path);
  };
  m.output_json = place(r.str(r.need(o, "/output", "json"), "/output/json"));
  if (const json* v = r.opt(o, "csv")) m.output_csv = place(r.str(*v, "/output/csv"));
  m.runs_dir = place(r.str(r.need(o, "/output", "runs"), "/output/runs"));
  if (m.output_json == m.output_csv) r.fail("/output/csv", "the same file as /output/json");
}

// What every cell's config shares, worked out once.
struct CellContext {
  const io::JsonReader& r;
  const std::string& path;
  const json& base;
  const StudyGrid& grid;
  std::string corpus_rel;  // the cells' configs live in the runs directory: their corpus path is relative to it
  double base_lr = 0;      // /optimizer/lr of the base config: Muon's rate is scaled by lr / base_lr
  std::string runs_dir;
};

// One cell: its identity, and its config (the base with the grid's values) validated by the trainer's parser.
Cell makeCell(const CellContext& x, std::size_t index, const std::string& arm, const std::string& opt, int depth, bool on, double lr,
              std::uint64_t seed) {
  const io::JsonReader& r = x.r;
  Cell c;
  c.index = index;
  c.arm = arm;
  c.qk_norm = on;
  c.lr = lr;
  c.seed = seed;
  c.id = std::string(on ? "qk-on" : "qk-off") + "_lr-" + lrLabel(lr) + "_seed-" + std::to_string(seed);
  if (x.grid.sweep_depth) c.id += "_layers-" + std::to_string(depth);
  if (x.grid.sweep_opt) c.id += opt == "adamw" ? "_adamw" : "_muon";
  json cfg = x.base;
  cfg["name"] = (cfg.contains("name") && cfg["name"].is_string() ? cfg["name"].get<std::string>() + " " : std::string()) + c.id;
  cfg["corpus"] = x.corpus_rel;
  cfg["seed"] = seed;
  if (!cfg.contains("model") || !cfg["model"].is_object()) r.fail("/base", "the base config has no /model object");
  cfg["model"]["qk_norm"] = on;
  if (x.grid.sweep_depth) cfg["model"]["n_layers"] = depth;
  if (!cfg.contains("optimizer") || !cfg["optimizer"].is_object()) r.fail("/base", "the base config has no /optimizer object");
  json& op = cfg["optimizer"];
  if (x.grid.sweep_opt) op["kind"] = opt;
  op["lr"] = lr;
  if (op.value("kind", "") == "muon+adamw") {
    const double base_muon = op.contains("muon_lr") && op["muon_lr"].is_number() ? op["muon_lr"].get<double>() : 0.02;
    if (!(x.base_lr > 0)) r.fail("/base", "the base config has no positive /optimizer/lr to scale /optimizer/muon_lr by");
    c.muon_lr = base_muon * lr / x.base_lr;
    op["muon_lr"] = *c.muon_lr;
  } else {
    op.erase("muon_lr");
  }
  const std::string cell_path = (fs::path(x.runs_dir) / (c.id + ".config.json")).string();
  try {
    const train::TrainConfig tc = train::parseTrainConfig(cfg, cell_path, "");
    c.n_layers = tc.model.n_layers;
    c.optimizer = train::optimizerName(tc.optimizer.kind);
  } catch (const UsageError& e) {
    throw UsageError(std::string("study manifest ") + x.path + ": cell " + c.id + " (the base config with /set and the grid applied): " + e.what());
  }
  c.config = std::move(cfg);
  return c;
}

// The grid's product, optimizer x depth x QK-norm (one arm each) x LR x seed, in that order.
void expandCells(const io::JsonReader& r, const std::string& path, const json& base, const StudyGrid& grid, StudyManifest& m) {
  // the size first: every cell is a training run, and a grid past the cap is a typo, not a plan
  const double n_cells = static_cast<double>(grid.optimizers.size()) * static_cast<double>(grid.depths.size()) *
                         static_cast<double>(grid.qk.size()) * static_cast<double>(m.lrs.size()) * static_cast<double>(grid.seeds.size());
  if (n_cells > static_cast<double>(kMaxStudyCells))
    r.fail("/grid", "expands into " + output::wholeNumber(n_cells) + " cells (optimizers x depths x QK-norm x learning rates x seeds), more than " +
                        std::to_string(kMaxStudyCells) + " training runs: split the study into several manifests");
  CellContext x{r, path, base, grid, {}, 0, m.runs_dir};
  x.corpus_rel = fs::absolute(m.corpus).lexically_normal().lexically_relative(fs::absolute(m.runs_dir).lexically_normal()).string();
  if (base.contains("optimizer") && base["optimizer"].is_object() && base["optimizer"].contains("lr") && base["optimizer"]["lr"].is_number())
    x.base_lr = base["optimizer"]["lr"].get<double>();
  m.cells.reserve(static_cast<std::size_t>(n_cells));
  std::unordered_map<std::string, double> lr_of_id;  // the runs' names must differ: linear, not a scan per cell
  for (const std::string& opt : grid.optimizers)
    for (int depth : grid.depths)
      for (bool on : grid.qk) {
        std::string arm = on ? "qk-on" : "qk-off";
        if (grid.sweep_depth) arm += " L" + std::to_string(depth);
        if (grid.sweep_opt) arm += " " + opt;
        m.arms.push_back(arm);
        for (double lr : m.lrs)
          for (std::uint64_t seed : grid.seeds) {
            Cell c = makeCell(x, m.cells.size(), arm, opt, depth, on, lr, seed);
            if (const auto [it, fresh] = lr_of_id.emplace(c.id, c.lr); !fresh)
              r.fail("/grid/lr", "learning rates " + json(it->second).dump() + " and " + json(c.lr).dump() +
                                     " are the same to 4 significant digits (the runs' names): make them differ more");
            m.cells.push_back(std::move(c));
          }
      }
}

}  // namespace

StudyManifest parseStudyManifest(const json& j, const std::string& path, const std::string& sha256, const std::string& verbatim,
                                 OutputPlacement outputs) {
  const io::JsonReader r("study manifest " + path);
  r.object(j, "", {"schema", "description", "base", "corpus", "set", "grid", "confidence", "output"});
  r.schema(j, "omn-audit/study-manifest@1");
  StudyManifest m;
  m.path = path;
  m.sha256 = sha256;
  m.verbatim = verbatim;
  if (const json* v = r.opt(j, "description")) m.description = r.str(*v, "/description");
  if (const json* v = r.opt(j, "confidence")) m.confidence = r.num(*v, "/confidence", 0, 1, true, true);
  // the grid is read against the base; the outputs apart: every mistake is reported in one error
  io::ErrorList errors(r.label());
  json base;
  StudyGrid grid;
  errors.check([&] {
    base = parseBase(r, j, path, m);
    grid = parseGrid(r, j, base, m);
  });
  errors.check([&] { parseOutputs(r, j, path, outputs, m); });
  errors.throwIfAny();
  expandCells(r, path, base, grid, m);
  return m;
}

StudyManifest loadStudyManifest(const std::string& path, OutputPlacement outputs) {
  const std::string bytes = data::readTextFile(path, "study manifest");
  const json j = io::parseJson(bytes, "study manifest " + path);
  return parseStudyManifest(j, path, io::sha256Bytes(bytes.data(), bytes.size()), bytes, outputs);
}

std::vector<Cell> shardCells(const std::vector<Cell>& cells, int index, int count) {
  std::vector<Cell> out;
  for (const auto& c : cells)
    if (count <= 1 || static_cast<int>(c.index % static_cast<std::size_t>(count)) == index) out.push_back(c);
  return out;
}

}  // namespace omn::study
