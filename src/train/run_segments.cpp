#include "omn/train/run_segments.h"

#include "omn/errors.h"

namespace omn::train {
using nlohmann::json;

namespace {

template <class T>
json segmentFieldOrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

template <class T>
std::optional<T> segmentField(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// One element of a validated record's /segments (the schema requires and types every field).
RunSegment segmentFromJson(const json& j) {
  RunSegment s;
  s.start_step = j.at("start_step").get<std::int64_t>();
  s.end_step = j.at("end_step").get<std::int64_t>();
  s.tokens = j.at("tokens").get<std::int64_t>();
  s.end = j.at("end").get<std::string>();
  s.started_utc = segmentField<std::string>(j, "started_utc");
  s.finished_utc = segmentField<std::string>(j, "finished_utc");
  s.seconds = segmentField<double>(j, "seconds");
  s.threads = segmentField<int>(j, "threads");
  s.cpu = segmentField<std::string>(j, "cpu");
  s.openblas = segmentField<std::string>(j, "openblas");
  s.openblas_coretype = segmentField<std::string>(j, "openblas_coretype");
  s.bf16_products = segmentField<std::string>(j, "bf16_products");
  s.git_revision = segmentField<std::string>(j, "git_revision");
  s.model_code_fingerprint = segmentField<std::string>(j, "model_code_fingerprint");
  return s;
}

// (end_step - start_step) x tokens_per_step, or FormatError naming the segment when it overflows.
std::int64_t segmentTokens(std::int64_t steps, std::int64_t tokens_per_step, const std::string& where) {
  std::int64_t tokens = 0;
  if (__builtin_mul_overflow(steps, tokens_per_step, &tokens))
    throw FormatError(where + ": " + std::to_string(steps) + " steps of " + std::to_string(tokens_per_step) + " tokens overflow a count");
  return tokens;
}

// The order a resume relies on: each segment within /steps, starting at or before the previous one's end.
void checkSegmentOrder(const std::vector<RunSegment>& segs, const json& doc, const std::string& path, std::int64_t tokens_per_step) {
  const std::int64_t steps = doc.at("steps").get<std::int64_t>();
  std::int64_t total = 0;  // timingJson adds them up
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const RunSegment& s = segs[i];
    const std::string at = path + ": /segments/" + std::to_string(i);
    if (s.end_step < s.start_step || s.end_step > steps)
      throw FormatError(at + "/end_step: expected a step from its start_step " + std::to_string(s.start_step) + " to /steps " +
                        std::to_string(steps) + ", got " + std::to_string(s.end_step));
    if (i > 0 && s.start_step > segs[i - 1].end_step)
      throw FormatError(at + "/start_step: expected at most the previous segment's end_step " + std::to_string(segs[i - 1].end_step) +
                        " (a resume continues from a checkpoint it wrote), got " + std::to_string(s.start_step));
    if (i > 0 && !s.recorded()) throw FormatError(at + "/end: \"unrecorded\" only describes the first segment");
    if (s.tokens != segmentTokens(s.end_step - s.start_step, tokens_per_step, at))
      throw FormatError(at + "/tokens: expected " + std::to_string(s.end_step - s.start_step) + " steps of " +
                        std::to_string(tokens_per_step) + " tokens, got " + std::to_string(s.tokens));
    if (__builtin_add_overflow(total, s.tokens, &total)) throw FormatError(at + "/tokens: the segments' tokens overflow a count");
  }
  const json& last = doc.at("last_checkpoint_step");
  if (!segs.empty() && last.is_number_integer() && segs.back().end_step < last.get<std::int64_t>())
    throw FormatError(path + ": /segments/" + std::to_string(segs.size() - 1) + "/end_step: expected at least /last_checkpoint_step " +
                      last.dump() + ", got " + std::to_string(segs.back().end_step));
  if (segs.empty() && !doc.at("checkpoints").empty())
    throw FormatError(path + ": /segments: expected the segments that wrote its checkpoints, got none");
}

}  // namespace

json toJson(const RunSegment& s) {
  return {{"start_step", s.start_step},
          {"end_step", s.end_step},
          {"tokens", s.tokens},
          {"end", s.end},
          {"started_utc", segmentFieldOrNull(s.started_utc)},
          {"finished_utc", segmentFieldOrNull(s.finished_utc)},
          {"seconds", segmentFieldOrNull(s.seconds)},
          {"threads", segmentFieldOrNull(s.threads)},
          {"cpu", segmentFieldOrNull(s.cpu)},
          {"openblas", segmentFieldOrNull(s.openblas)},
          {"openblas_coretype", segmentFieldOrNull(s.openblas_coretype)},
          {"bf16_products", segmentFieldOrNull(s.bf16_products)},
          {"git_revision", segmentFieldOrNull(s.git_revision)},
          {"model_code_fingerprint", segmentFieldOrNull(s.model_code_fingerprint)}};
}

json segmentsJson(const std::vector<RunSegment>& segments) {
  json out = json::array();
  for (const RunSegment& s : segments) out.push_back(toJson(s));
  return out;
}

std::vector<RunSegment> recordedSegments(const json& doc, const std::string& path, std::int64_t tokens_per_step) {
  std::vector<RunSegment> segs;
  if (!doc.contains("segments")) {  // written before segments were recorded: what it can still say
    const json& last = doc.at("last_checkpoint_step");
    if (!last.is_number_integer() || doc.at("checkpoints").empty()) return segs;
    RunSegment s;
    s.end_step = last.get<std::int64_t>();
    s.tokens = segmentTokens(s.end_step, tokens_per_step, path + ": /last_checkpoint_step");
    s.end = "unrecorded";
    segs.push_back(s);
    return segs;
  }
  for (const json& j : doc.at("segments")) segs.push_back(segmentFromJson(j));
  checkSegmentOrder(segs, doc, path, tokens_per_step);
  return segs;
}

json timingJson(const std::vector<RunSegment>& segments) {
  double seconds = 0;
  std::int64_t tokens = 0, timed_tokens = 0, unrecorded_steps = 0;
  for (const RunSegment& s : segments) {
    tokens += s.tokens;
    if (s.seconds) {
      seconds += *s.seconds;
      timed_tokens += s.tokens;
    } else {
      unrecorded_steps += s.end_step - s.start_step;
    }
  }
  return {{"seconds", seconds},
          {"tokens_trained", tokens},
          {"tokens_per_second", seconds > 0 ? static_cast<double>(timed_tokens) / seconds : 0.0},
          {"segments", segments.size()},
          {"unrecorded_steps", unrecorded_steps}};
}

}  // namespace omn::train
