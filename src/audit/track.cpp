#include "omn/audit/track.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "omn/audit/profile_run.h"
#include "omn/audit/regression.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/documents/train_document.h"
#include "omn/io/json_document.h"
#include "omn/io/model_folder.h"
#include "omn/output/provenance.h"

namespace omn::audit {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool isCheckpointName(const std::string& name) {
  auto ends = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".optim.pt")) return false;
  return ends(".pt") || ends(".pth") || ends(".bin") || ends(".safetensors");
}

// Whether each directory is a model folder, its config.json read once however often it is asked.
class FolderKinds {
 public:
  bool isModelFolder(const fs::path& dir) {
    const auto [it, fresh] = known_.emplace(dir.lexically_normal().string(), false);
    if (fresh) it->second = io::isModelFolder(dir.string());
    return it->second;
  }

 private:
  std::map<std::string, bool> known_;
};

// Name order with runs of digits compared as numbers: checkpoint-500 before checkpoint-1000.
bool naturalLess(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      const std::string ta = na.substr(std::min(na.find_first_not_of('0'), na.size())),
                        tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

// An integer step of a checkpoint's metadata or a Trainer's state: empty when there is none (or one
// beyond a 64-bit step).
std::optional<std::int64_t> integerStep(const json& record, const char* key) {
  if (!record.is_object()) return std::nullopt;
  const auto it = record.find(key);
  if (it == record.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return it->get<std::int64_t>();
}

// A Trainer checkpoint folder's step: trainer_state.json /global_step (empty when absent).
std::optional<std::int64_t> trainerStep(const std::string& dir) {
  const fs::path f = fs::path(dir) / "trainer_state.json";
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return std::nullopt;
  return integerStep(io::readJsonFile(f.string(), "trainer state"), "global_step");
}

// The --digests lines for one tracked checkpoint: its own, or for a model folder (a directory
// expandTrackInputs yielded is one) every line naming a file inside it (sha256sum DIR/*), which
// profile checks.
bool namesFileIn(const std::string& checkpoint, const std::string& listed) {
  std::error_code ec;
  return fs::is_directory(checkpoint, ec) && listedInFolder(listed, checkpoint);
}

// The digests a run directory's train.json records for its checkpoints (checkpoints/*, final.pt):
// key(path) -> (digest, where it is recorded). A train.json that is not a train document is
// FormatError naming it; a listed checkpoint that is gone is not an error (a run keeps the ones
// it keeps).
struct Recorded {
  std::string sha256, where;
};
// Keyed by the file each entry resolves to (links resolved): a file several runs record (a link
// from one run into another) is checked against every record that names it, whatever the order
// the runs were given in.
void addRecordedDigests(const std::string& dir, std::map<std::string, std::vector<Recorded>>& out) {
  const fs::path train = fs::path(dir) / "train.json";
  std::error_code ec;
  // absent: not a run; present but not a regular file (a FIFO, a directory, a link to /dev/null or
  // nowhere): exit 2 naming it (readTextFile refuses it), never a run silently left unchecked
  if (!fs::exists(fs::symlink_status(train, ec))) return;
  if (!fs::exists(train, ec)) throw FormatError("run record " + train.string() + ": a link to nothing");
  const json doc = io::readJsonFile(train.string(), "run record");
  documents::checkDocument(doc, train.string(), {documents::DocumentKind::train});
  const documents::TrainDocument run = documents::TrainDocument::fromJson(doc, train.string());
  auto add = [&](const std::string& path, const std::string& sha256, const std::string& pointer) {
    const fs::path p = fs::path(dir) / path;
    out[digestKey(p.string())].push_back({sha256, train.string() + " " + pointer + "/sha256"});
  };
  for (std::size_t i = 0; i < run.checkpoints.size(); ++i)
    add(run.checkpoints[i].path, run.checkpoints[i].sha256, "/checkpoints/" + std::to_string(i));
  if (run.final_checkpoint) add(run.final_checkpoint->path, run.final_checkpoint->sha256, "/final_checkpoint");
}

// The file's digest against every run record that names it (IntegrityError naming the record).
void requireRecorded(const std::string& path, const std::string& sha256, const std::vector<Recorded>& records,
                     const std::string& digests_path) {
  for (const auto& rec : records) {
    if (sha256 == rec.sha256) continue;
    std::error_code ec;
    const std::string resolved = fs::weakly_canonical(path, ec).string();
    throw IntegrityError(path + (ec || resolved == fs::absolute(path, ec).lexically_normal().string() ? "" : " (" + resolved + ")") +
                         (digests_path.empty() ? ": its SHA-256 " + sha256 + " is not"
                                               : ": matches --digests " + digests_path + " but not") +
                         " the SHA-256 " + rec.where + " records (" + rec.sha256 + "): the run's record and the file disagree");
  }
}

using PinnedDigests = std::map<std::string, std::string>;              // digestKey(path) -> digest
using RecordedDigests = std::map<std::string, std::vector<Recorded>>;  // digestKey(path) -> records

// The --digests lines keyed by the file each names (a listed path and a checkpoint path: the same
// file when they resolve to one place); two spellings of one file (./a and a, a link) must agree.
PinnedDigests pinnedDigests(const TrackRequest& req) {
  PinnedDigests digests;
  for (const auto& [p, d] : req.digests)
    if (const auto [it, fresh] = digests.emplace(digestKey(p), d); !fresh && it->second != d)
      throw UsageError("--digests " + req.digests_path + ": " + p + " names a file another line already pins, with a different digest (" +
                       it->second + " and " + d + ")");
  return digests;
}

// What the runs' own train.json files record: checked like a --digests line (the two must agree).
RecordedDigests recordedDigests(const std::vector<std::string>& inputs) {
  RecordedDigests recorded;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) addRecordedDigests(in, recorded);
  }
  return recorded;
}

// Every --digests line names one of the checkpoints given, or a file inside a model folder given.
void requireDigestsNameCheckpoints(const TrackRequest& req, const std::vector<std::string>& paths) {
  for (const auto& [p, d] : req.digests) {
    bool named = false;
    for (const auto& c : paths) named = named || digestKey(c) == digestKey(p) || namesFileIn(c, p);
    if (!named)
      throw UsageError("--digests " + req.digests_path + ": " + p + " is not one of the checkpoints given (paths are relative to the current directory, as for sha256sum -c)");
  }
}

struct TrackedProfile {
  documents::ProfileDocument profile;
  bool hashed = false;  // its digest was computed (pinned, recorded, or a folder's file pinned)
};

// One checkpoint profiled, its digest checked against its --digests line (or, without one, its
// run's record) and then against every run record that names it.
TrackedProfile profileTracked(const TrackRequest& req, const std::string& p, const PinnedDigests& digests,
                              const RecordedDigests& recorded) {
  ProfileRequest pr;
  pr.checkpoint = p;
  pr.preset = req.preset;
  pr.state_key = req.state_key;
  pr.options = req.options;
  const auto d = digests.find(digestKey(p));
  const auto r = recorded.find(digestKey(p));
  pr.hash = d != digests.end() || r != recorded.end();
  pr.parameters = false;  // a trajectory of gains: the model's size and head are not read
  if (d != digests.end()) pr.expected_sha256 = d->second;
  else if (r != recorded.end()) pr.expected_sha256 = r->second.front().sha256;
  for (const auto& [lp, ld] : req.digests)  // a model folder's files, pinned line by line
    if (namesFileIn(p, lp)) pr.digests.emplace(lp, ld), pr.digests_path = req.digests_path, pr.hash = true;
  TrackedProfile tracked;
  try {
    tracked.profile = profileCheckpoint(pr);  // IntegrityError on a mismatch
  } catch (const IntegrityError& e) {
    if (d != digests.end() || r == recorded.end()) throw;
    throw IntegrityError(std::string(e.what()) + " (the digest " + r->second.front().where + " records)");
  }
  // pinned by --digests and recorded by the run, or recorded by several runs: the file must be
  // what each says
  if (r != recorded.end())
    requireRecorded(p, tracked.profile.checkpoint.sha256.value_or(""), r->second, d != digests.end() ? req.digests_path : "");
  tracked.hashed = pr.hash;
  return tracked;
}

// The checkpoint's training step: its metadata's integer "step", else (a model folder, as profile
// read it) its trainer_state.json's; empty when neither says.
std::optional<std::int64_t> checkpointStep(const std::string& p, const documents::ProfileCheckpoint& checkpoint) {
  std::optional<std::int64_t> step = integerStep(checkpoint.metadata, "step");
  if (!step && checkpoint.folder) step = trainerStep(p);
  return step;
}

documents::RoleSummary roleSummary(const documents::GainVector& v) { return {v.mean, v.std, v.min, v.max}; }

// One point of the trajectory: what the profile says of the file, its statistics and each layer's
// Q and K summary; no drift until a baseline is checked.
documents::TrackPoint trackPoint(const std::string& p, const documents::ProfileDocument& prof) {
  documents::TrackPoint point;
  point.path = p;
  point.step = checkpointStep(p, prof.checkpoint);
  point.sha256 = prof.checkpoint.sha256;
  point.sha256_verified = prof.checkpoint.sha256_verified;
  point.size_bytes = prof.checkpoint.size_bytes;
  point.preset = prof.preset.name;
  point.statistics = prof.statistics;
  for (const auto& l : prof.layers) point.layers.push_back({l.layer, roleSummary(l.q), roleSummary(l.k)});
  return point;
}

// The profile against --baseline: how many statistics were checked, and the ones that drifted.
documents::TrackDrift driftFromBaseline(const TrackRequest& req, const documents::ProfileDocument& prof) {
  const RegressionReport rep = checkRegression(prof, *req.baseline, req.tolerance, req.baseline_path);
  return {static_cast<std::int64_t>(rep.checks.size()), static_cast<std::int64_t>(rep.drifted()), rep.drifts()};
}

// --order step: by the recorded step, which every checkpoint must have; ties keep the given order.
void orderBySteps(std::vector<documents::TrackPoint>& points) {
  for (const auto& e : points)
    if (!e.step)
      throw UsageError(e.path + ": no integer \"step\" in its metadata to order by: give the order yourself with --order given");
  std::stable_sort(points.begin(), points.end(),
                   [](const documents::TrackPoint& a, const documents::TrackPoint& b) { return *a.step < *b.step; });
}

// Every checkpoint must be the same model: the same layers.
void requireOneModel(const std::vector<documents::TrackPoint>& points) {
  for (const auto& e : points)
    if (e.layers.size() != points.front().layers.size())
      throw UsageError(e.path + ": " + std::to_string(e.layers.size()) + " layers, but " + points.front().path + " has " +
                       std::to_string(points.front().layers.size()) + ": not the checkpoints of one model");
}

// The trajectory's counts: checkpoints, how many were verified whole, and (with a baseline) how many drifted.
documents::TrackSummary trackSummary(const std::vector<documents::TrackPoint>& points, std::int64_t verified, bool baseline) {
  documents::TrackSummary s;
  s.checkpoints = static_cast<std::int64_t>(points.size());
  s.verified = verified;
  s.unverified = s.checkpoints - verified;
  if (baseline)
    s.drifted = std::count_if(points.begin(), points.end(), [](const documents::TrackPoint& e) { return e.drift && e.drift->drifted > 0; });
  return s;
}

}  // namespace

std::vector<std::string> expandTrackInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  FolderKinds kinds;
  auto isModelFolder = [&kinds](const fs::path& dir) { return kinds.isModelFolder(dir); };
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!fs::exists(in, ec)) throw UsageError(in + ": no such file or directory");
    if (!fs::is_directory(in, ec)) {
      out.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    if (isModelFolder(in)) {  // a Hugging Face model folder is one checkpoint (a Trainer's final model), and
      out.push_back(in);      // its checkpoint-N/ model folders are the steps before it
      for (auto it = fs::directory_iterator(in, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
        if (it->is_directory(ec) && isModelFolder(it->path())) found.push_back(it->path().string());
      std::sort(found.begin(), found.end(), naturalLess);
      out.insert(out.end() - 1, found.begin(), found.end());
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(in, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it.depth() >= 1) it.disable_recursion_pending();  // the directory and its subdirectories: two levels
      if (it->is_directory(ec) && isModelFolder(it->path())) {  // a Trainer's checkpoint-N/ folders
        found.push_back(it->path().string());
        it.disable_recursion_pending();
      } else if (it->is_regular_file(ec) && isCheckpointName(it->path().filename().string()) && !isModelFolder(it->path().parent_path())) {
        found.push_back(it->path().string());
      }
    }
    if (ec) throw UsageError(in + ": cannot list the directory: " + ec.message());
    if (found.empty())
      throw UsageError(in + ": a directory with no checkpoint files (*.pt, *.pth, *.bin, *.safetensors) and no model folders (config.json)");
    std::sort(found.begin(), found.end(), naturalLess);
    out.insert(out.end(), found.begin(), found.end());
  }
  // one file named twice (a directory and one of its files) is tracked once, where first named
  std::vector<std::string> unique;
  std::vector<fs::path> seen;
  for (const auto& p : out) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(p, ec);
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(c);
    unique.push_back(p);
  }
  return unique;
}

documents::TrackDocument trackCheckpoints(const TrackRequest& req, const std::vector<std::string>& paths) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  const PinnedDigests digests = pinnedDigests(req);
  const RecordedDigests recorded = recordedDigests(req.inputs);
  requireDigestsNameCheckpoints(req, paths);

  documents::TrackDocument doc;
  std::int64_t verified = 0;
  for (const auto& p : paths) {
    const TrackedProfile tracked = profileTracked(req, p, digests, recorded);
    const documents::ProfileCheckpoint& c = tracked.profile.checkpoint;
    verified += c.verified.value_or("") == "all";  // an index alone is not its shards
    documents::TrackPoint point = trackPoint(p, tracked.profile);
    if (req.baseline) point.drift = driftFromBaseline(req, tracked.profile);
    if (tracked.hashed) prov.inputs.push_back({"checkpoint", c.path, c.sha256.value_or(""), c.sha256_verified});
    doc.checkpoints.push_back(std::move(point));
  }
  if (req.order == TrackOrder::Step) orderBySteps(doc.checkpoints);
  requireOneModel(doc.checkpoints);
  prov.finished_utc = output::utcNow();
  doc.provenance = output::provenanceRecord(prov);
  doc.order = req.order == TrackOrder::Step ? "step" : "given";
  doc.options.threshold = req.options.threshold;
  if (!req.digests_path.empty()) doc.digests = req.digests_path;
  if (req.baseline)
    doc.baseline = documents::TrackBaseline{req.baseline_path,
                                            req.tolerance_path.empty() ? std::nullopt : std::optional<std::string>(req.tolerance_path)};
  doc.summary = trackSummary(doc.checkpoints, verified, req.baseline.has_value());
  return doc;
}

}  // namespace omn::audit
