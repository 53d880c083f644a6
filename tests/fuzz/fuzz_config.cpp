// libFuzzer: any bytes as an intervention manifest, a study manifest or a training config (the
// first byte picks which): an omn::Error naming the JSON pointer or a parsed value, never a crash,
// a hang or an allocation out of proportion to the input (a layer range "0-1000000000" once
// allocated gigabytes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/intervene/manifest.h"
#include "omn/io/json_document.h"
#include "omn/study/study_manifest.h"
#include "omn/train/train_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string sha(64, '0');
  try {
    const nlohmann::json j = omn::io::parseJson(text, "fuzz");
    switch (data[0] % 3) {
      case 0:
        (void)omn::intervene::parseManifest(j, "/nonexistent/fuzz.json", sha, data[0] & 4);
        break;
      case 1:
        (void)omn::study::parseStudyManifest(j, "/nonexistent/fuzz.json", sha, text);
        break;
      default:
        (void)omn::train::parseTrainConfig(j, "/nonexistent/fuzz.json", sha);
    }
  } catch (const omn::Error&) {
  }
  return 0;
}
