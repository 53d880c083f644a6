// libFuzzer: what `train --resume` reads back, as any bytes. The first byte picks the reader:
// 0 the run record (train.json) as the resume checks it, 1 the training log (log.jsonl) line by
// line, 2 an optimizer state file (the torch.save reader, then the envelope's step and adamw_steps).
// Each ends in a record or an omn::Error naming the file and the place -- never a crash, a hang or
// a record accepted that breaks its rules.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/io/json_document.h"
#include "omn/train/run_records.h"
#include "omn/train/run_segments.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        const omn::train::RunRecord rr = omn::train::checkRunRecord(omn::io::parseJson(body, "train.json"), "train.json");
        if (rr.has_checkpoint != !rr.doc.checkpoints.empty()) std::abort();
        if (rr.last_step < 0 || (rr.has_checkpoint && rr.last_step > rr.doc.steps)) std::abort();
        // the segments a resume reads back: in order, within the run, reaching its last checkpoint
        const auto segs = omn::train::recordedSegments(rr.doc, "train.json", 4096);
        for (std::size_t i = 0; i < segs.size(); ++i)
          if (segs[i].end_step < segs[i].start_step || (i > 0 && segs[i].start_step > segs[i - 1].end_step)) std::abort();
        if (!segs.empty() && rr.has_checkpoint && segs.back().end_step < rr.last_step) std::abort();
        break;
      }
      case 1: {
        const auto log = omn::train::parseLog("log.jsonl", body);
        for (std::size_t i = 1; i < log.size(); ++i)  // accepted: steps strictly increasing
          if (log[i]["step"].get<std::int64_t>() <= log[i - 1]["step"].get<std::int64_t>()) std::abort();
        break;
      }
      default: {
        const int fd = memfd_create("optim", 0);
        if (fd < 0) return 0;
        if (!body.empty() && write(fd, body.data(), body.size()) != static_cast<ssize_t>(body.size())) {
          close(fd);
          return 0;
        }
        try {
          omn::io::OpenOptions oo;
          oo.state_key = "state";
          auto ck = omn::io::openCheckpoint("/proc/self/fd/" + std::to_string(fd), oo);
          const std::int64_t step = ck->metadata.is_object() && ck->metadata.contains("step") && ck->metadata["step"].is_number_integer()
                                        ? ck->metadata["step"].get<std::int64_t>()
                                        : 1;
          const std::int64_t n = omn::train::optimizerSteps(ck->metadata, "optim.pt", step);
          if (n < 0 || n > step) std::abort();
        } catch (...) {
          close(fd);
          throw;
        }
        close(fd);
      }
    }
  } catch (const omn::Error&) {
  }
  return 0;
}
