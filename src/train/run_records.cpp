#include "omn/train/run_records.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"

namespace omn::train {

using nlohmann::json;

std::vector<json> parseLog(const std::string& path, const std::string& text, const std::string& note) {
  std::vector<json> kept;
  std::int64_t previous = -1;  // step 0 (the evaluation at initialisation) comes first
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    const std::string where = path + ": line " + std::to_string(++line_no);
    json j;
    try {
      j = io::parseJson(line, where);
    } catch (const FormatError& e) {
      throw IntegrityError(std::string(e.what()) + note);
    }
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer() || j["step"].get<std::int64_t>() <= previous ||
        (j.contains("train_loss") && !j["train_loss"].is_number() && !j["train_loss"].is_null()) ||
        (j.contains("eval") && (!j["eval"].is_object() || !j["eval"].contains("heldout_loss") ||
                                !(j["eval"]["heldout_loss"].is_number() || j["eval"]["heldout_loss"].is_null()))))
      throw IntegrityError(where + ": expected a training log record with an integer \"step\" after " + std::to_string(previous) +
                           " (and a numeric train_loss, an eval with a numeric heldout_loss)");
    previous = j["step"].get<std::int64_t>();
    kept.push_back(std::move(j));
  }
  return kept;
}

std::string checkpointFileName(std::int64_t step) {
  char b[48];
  std::snprintf(b, sizeof b, "checkpoints/step-%06lld.pt", static_cast<long long>(step));
  return b;
}

RunRecord checkRunRecord(const json& doc, const std::string& path) {
  documents::checkDocument(doc, path, {documents::DocumentKind::train});  // types, ranges, checkpoint order
  RunRecord rr;
  rr.doc = documents::TrainDocument::fromJson(doc, path);
  const auto& checkpoints = rr.doc.checkpoints;
  rr.has_checkpoint = !checkpoints.empty();
  rr.last_step = rr.has_checkpoint ? checkpoints.back().step : 0;
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {  // each entry names its own step's file, nothing else
    const std::string want = checkpointFileName(checkpoints[i].step);
    if (checkpoints[i].path != want)
      throw FormatError(path + ": /checkpoints/" + std::to_string(i) + "/path: expected " + want + ", got " + json(checkpoints[i].path).dump());
  }
  return rr;
}

std::int64_t optimizerSteps(const json& md, const std::string& path, std::int64_t step) {
  if (!md.is_object() || !md.contains("step") || md["step"] != step)
    throw FormatError(path + ": optimizer state of step " + (md.is_object() && md.contains("step") ? md["step"].dump() : "?") +
                      ", expected " + std::to_string(step));
  const json& n = md.contains("adamw_steps") ? md["adamw_steps"] : json();
  if (!n.is_number_integer() || n.get<std::int64_t>() < 0 || n.get<std::int64_t>() > step)
    throw FormatError(path + ": adamw_steps: expected a count from 0 to the step " + std::to_string(step) + ", got " + n.dump());
  return n.get<std::int64_t>();
}

std::string runRecordPath(const std::string& run) {
  return std::filesystem::is_directory(run) ? (std::filesystem::path(run) / "train.json").string() : run;
}

std::string runLogPath(const std::string& train_json, const documents::TrainDocument& record) {
  const std::string& name = record.log;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw FormatError(train_json + ": /log: expected a file name beside it, got \"" + name + "\"");
  return (std::filesystem::path(train_json).parent_path() / name).string();
}

std::vector<documents::TrainLogRecord> readRunLog(const std::string& train_json, const documents::TrainDocument& record) {
  const std::string path = runLogPath(train_json, record);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot be read (the log " + train_json + " names in /log)");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  return documents::TrainLogRecord::fromJson(parseLog(path, text, ""), path);
}

}  // namespace omn::train
