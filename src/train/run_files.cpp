#include "omn/train/run_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/io/checkpoint_writer.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/model/weights.h"
#include "omn/output/json_file.h"
#include "omn/train/run_records.h"

namespace omn::train {
namespace fs = std::filesystem;
using nlohmann::json;

RunPaths::RunPaths(const std::string& out) : dir(out) {
  const fs::path d(out);
  config = (d / "config.json").string();
  log = (d / "log.jsonl").string();
  checkpoints = (d / "checkpoints").string();
  final_checkpoint = (d / "final.pt").string();
  train_json = (d / "train.json").string();
  lock = (d / ".lock").string();
}

std::string RunPaths::stepCheckpoint(std::int64_t step) const { return (fs::path(dir) / checkpointName(step)).string(); }

std::string RunPaths::checkpointName(std::int64_t step) { return checkpointFileName(step); }

std::string RunPaths::stepOptimizer(std::int64_t step) const {
  char b[40];
  std::snprintf(b, sizeof b, "step-%06lld.optim.pt", static_cast<long long>(step));
  return (fs::path(checkpoints) / b).string();
}

RunLock::RunLock(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError(path + ": cannot open the run's lock file: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw UsageError(fs::path(path).parent_path().string() + ": another omn-audit train holds this run directory");
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

std::string writeWeights(const std::string& path, const TrainableModel& m, const json& record, std::int64_t step,
                         std::int64_t tokens_seen, std::uint64_t seed) {
  std::vector<at::Tensor> keep;
  const std::vector<io::TensorRecord> recs = tensorRecords(m.params, keep);
  const json envelope = {{"format", "omn-audit/checkpoint@1"},
                         {"step", step},
                         {"tokens_seen", tokens_seen},
                         {"seed", static_cast<std::int64_t>(seed & 0x7FFFFFFFFFFFFFFFull)},
                         {"omn_audit", record.dump()}};
  const std::string bytes = io::torchCheckpointBytes(recs, envelope, "model", "archive");
  output::writeFileAtomic(path, bytes);
  return io::sha256Bytes(bytes.data(), bytes.size());
}

std::string writeOptimizer(const std::string& path, const OptimizerState& s, const std::vector<std::string>& adamw_names,
                           const std::vector<std::string>& muon_names, std::int64_t step) {
  std::vector<io::TensorRecord> recs;
  std::vector<at::Tensor> keep;
  keep.reserve(2 * adamw_names.size() + muon_names.size());
  auto add = [&](const std::string& name, const at::Tensor& t) {
    keep.push_back(t.detach().to(at::kCPU, at::kFloat).contiguous());
    recs.push_back({name, io::DType::F32, keep.back().sizes().vec(), keep.back().data_ptr(),
                    static_cast<std::size_t>(keep.back().numel()) * 4});
  };
  const auto& st = s.adamw->state();
  for (std::size_t i = 0; i < st.size(); ++i) {
    add("adamw.exp_avg." + adamw_names[i], st[i].exp_avg);
    add("adamw.exp_avg_sq." + adamw_names[i], st[i].exp_avg_sq);
  }
  if (s.muon)
    for (std::size_t i = 0; i < s.muon->momentum().size(); ++i) add("muon.momentum." + muon_names[i], s.muon->momentum()[i]);
  const json envelope = {{"format", "omn-audit/optimizer@1"}, {"step", step}, {"adamw_steps", s.adamw->steps()}};
  const std::string bytes = io::torchCheckpointBytes(recs, envelope, "state", "archive");
  output::writeFileAtomic(path, bytes);
  return io::sha256Bytes(bytes.data(), bytes.size());
}

void readOptimizer(const std::string& path, const OptimizerState& s, const std::vector<at::Tensor>& adamw_params,
                   const std::vector<std::string>& adamw_names, const std::vector<at::Tensor>& muon_params,
                   const std::vector<std::string>& muon_names, std::int64_t step) {
  io::OpenOptions oo;
  oo.state_key = "state";
  const auto ck = io::openCheckpoint(path, oo);
  const std::int64_t adamw_steps = optimizerSteps(ck->metadata, path, step);
  auto get = [&](const std::string& name, const at::Tensor& like) {
    const io::TensorRef* r = ck->index.find(name);
    if (!r) throw FormatError(path + ": tensor '" + name + "' is missing (the optimizer state does not match the model)");
    if (r->shape != like.sizes().vec())
      throw FormatError(path + ": tensor '" + name + "': expected shape " + io::shapeString(like.sizes().vec()) + ", got " +
                        io::shapeString(r->shape));
    return model::toTensor(*r, at::kFloat, like.device(), /*owned=*/true);
  };
  std::vector<AdamWState> st;
  for (std::size_t i = 0; i < adamw_params.size(); ++i)
    st.push_back({get("adamw.exp_avg." + adamw_names[i], adamw_params[i]), get("adamw.exp_avg_sq." + adamw_names[i], adamw_params[i])});
  s.adamw->setState(std::move(st), adamw_steps);
  if (s.muon) {
    std::vector<at::Tensor> mom;
    for (std::size_t i = 0; i < muon_params.size(); ++i) mom.push_back(get("muon.momentum." + muon_names[i], muon_params[i]));
    s.muon->setMomentum(std::move(mom));
  }
}

std::vector<documents::TrainLogRecord> restoreLog(const std::string& path, const std::string& text) {
  std::vector<documents::TrainLogRecord> kept = documents::TrainLogRecord::fromJson(parseLog(path, text), path);
  output::writeFileAtomic(path, text);
  return kept;
}

std::string appendLog(const std::string& path, const documents::TrainLogRecord& record) {
  const std::string line = record.toJson().dump() + "\n";
  std::ofstream out(path, std::ios::app);
  out << line;
  out.flush();
  if (!out) throw IoError(path + ": cannot append to the training log: " + std::strerror(errno));
  return line;
}

}  // namespace omn::train
