// libFuzzer: any bytes as a journal resumed after a crash: every line checked (checksum), a torn
// tail cut, a bad record refused with an omn::Error naming the line -- never a crash or a record
// trusted without its checksum; each record read as a sweep's pass (intervene/pass_record.h) or refused
// with an omn::Error (also one bound to another sweep), and one that reads writes the same line again.
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
      // what the line says it is bound to and scored, taken as this sweep's: the reader goes past the binding
      omn::intervene::JournalExpectation expect;
      if (r.contains("sweep_sha256") && r["sweep_sha256"].is_string()) expect.sweep_sha256 = r["sweep_sha256"];
      const nlohmann::json* tokens = r.contains("scores") && r["scores"].is_object() && r["scores"].contains("tokens") ? &r["scores"]["tokens"] : nullptr;
      if (tokens && tokens->is_array())
        for (const auto& t : *tokens) expect.tokens.push_back(t.is_number_integer() ? t.get<std::int64_t>() : -1);
      if (r.contains("mechanism") && r["mechanism"].is_array()) expect.mechanism_layers = r["mechanism"].size();
      expect.divergence = r.contains("divergence") && !r["divergence"].is_null();
      try {
        const nlohmann::json line =
            omn::intervene::journalLine(omn::intervene::recordFromJournal(r, "journal", control, expect), expect.sweep_sha256);
        if (omn::intervene::journalLine(omn::intervene::recordFromJournal(line, "journal", control, expect), expect.sweep_sha256) != line)
          std::abort();
      } catch (const omn::Error&) {
      }
    }
    j.append({{"fuzz", 1}});
  } catch (const omn::Error&) {
  }
  ::unlink(path.c_str());
  return 0;
}
