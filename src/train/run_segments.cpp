#include "omn/train/run_segments.h"

#include "omn/errors.h"

namespace omn::train {

namespace {

// (end_step - start_step) x tokens_per_step, or FormatError naming the segment when it overflows.
std::int64_t segmentTokens(std::int64_t steps, std::int64_t tokens_per_step, const std::string& where) {
  std::int64_t tokens = 0;
  if (__builtin_mul_overflow(steps, tokens_per_step, &tokens))
    throw FormatError(where + ": " + std::to_string(steps) + " steps of " + std::to_string(tokens_per_step) + " tokens overflow a count");
  return tokens;
}

// The order a resume relies on: each segment within /steps, starting at or before the previous one's end.
void checkSegmentOrder(const std::vector<RunSegment>& segs, const documents::TrainDocument& doc, const std::string& path,
                       std::int64_t tokens_per_step) {
  std::int64_t total = 0;  // runTiming adds them up
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const RunSegment& s = segs[i];
    const std::string at = path + ": /segments/" + std::to_string(i);
    if (s.end_step < s.start_step || s.end_step > doc.steps)
      throw FormatError(at + "/end_step: expected a step from its start_step " + std::to_string(s.start_step) + " to /steps " +
                        std::to_string(doc.steps) + ", got " + std::to_string(s.end_step));
    if (i > 0 && s.start_step > segs[i - 1].end_step)
      throw FormatError(at + "/start_step: expected at most the previous segment's end_step " + std::to_string(segs[i - 1].end_step) +
                        " (a resume continues from a checkpoint it wrote), got " + std::to_string(s.start_step));
    if (i > 0 && !s.recorded()) throw FormatError(at + "/end: \"unrecorded\" only describes the first segment");
    if (s.tokens != segmentTokens(s.end_step - s.start_step, tokens_per_step, at))
      throw FormatError(at + "/tokens: expected " + std::to_string(s.end_step - s.start_step) + " steps of " +
                        std::to_string(tokens_per_step) + " tokens, got " + std::to_string(s.tokens));
    if (__builtin_add_overflow(total, s.tokens, &total)) throw FormatError(at + "/tokens: the segments' tokens overflow a count");
  }
  const std::optional<std::int64_t>& last = doc.last_checkpoint_step;
  if (!segs.empty() && last && segs.back().end_step < *last)
    throw FormatError(path + ": /segments/" + std::to_string(segs.size() - 1) + "/end_step: expected at least /last_checkpoint_step " +
                      std::to_string(*last) + ", got " + std::to_string(segs.back().end_step));
  if (segs.empty() && !doc.checkpoints.empty())
    throw FormatError(path + ": /segments: expected the segments that wrote its checkpoints, got none");
}

}  // namespace

std::vector<RunSegment> recordedSegments(const documents::TrainDocument& doc, const std::string& path, std::int64_t tokens_per_step) {
  std::vector<RunSegment> segs;
  if (!doc.segments) {  // written before segments were recorded: what it can still say
    if (!doc.last_checkpoint_step || doc.checkpoints.empty()) return segs;
    RunSegment s;
    s.end_step = *doc.last_checkpoint_step;
    s.tokens = segmentTokens(s.end_step, tokens_per_step, path + ": /last_checkpoint_step");
    s.end = "unrecorded";
    segs.push_back(s);
    return segs;
  }
  segs = *doc.segments;
  checkSegmentOrder(segs, doc, path, tokens_per_step);
  return segs;
}

documents::TrainTiming runTiming(const std::vector<RunSegment>& segments) {
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
  documents::TrainTiming t;
  t.seconds = seconds;
  t.tokens_per_second = seconds > 0 ? static_cast<double>(timed_tokens) / seconds : 0.0;
  t.tokens_trained = tokens;
  t.segments = static_cast<std::int64_t>(segments.size());
  t.unrecorded_steps = unrecorded_steps;
  return t;
}

}  // namespace omn::train
