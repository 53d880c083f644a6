// libFuzzer: any bytes as a journal resumed after a crash: every line checked (checksum), a torn
// tail cut, a bad record refused with an omn::Error naming the line -- never a crash or a record
// trusted without its checksum; each record read as a sweep's pass (intervene/pass_record.h) or refused
// with an omn::Error, and one that reads writes the same line again.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/intervene/pass_record.h"
#include "omn/io/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/omn-fuzz-journal-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    omn::io::Journal j = omn::io::Journal::resume(path);
    for (const auto& r : j.records()) {
      if (!r.is_object()) std::abort();  // a record is an object whose checksum was verified
      const bool control = r.contains("kind") && r["kind"] == "control";
      (void)omn::intervene::reusable(r);
      try {
        const nlohmann::json line = omn::intervene::journalLine(omn::intervene::recordFromJournal(r, "journal", control));
        if (omn::intervene::journalLine(omn::intervene::recordFromJournal(line, "journal", control)) != line) std::abort();
      } catch (const omn::Error&) {
      }
    }
    j.append({{"fuzz", 1}});
  } catch (const omn::Error&) {
  }
  ::unlink(path.c_str());
  return 0;
}
