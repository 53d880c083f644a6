#include "omn/audit/run_directory.h"

#include <filesystem>
#include <system_error>

#include "omn/errors.h"
#include "omn/io/json_document.h"

namespace omn::audit {

namespace fs = std::filesystem;

void refuseRunDirectory(const std::string& path) {
  std::error_code ec;
  const fs::path config = fs::path(path) / "config.json";
  if (!fs::is_directory(path, ec) || !fs::is_regular_file(config, ec)) return;
  nlohmann::json j;
  try {
    j = io::parseJson(io::readTextFile(config.string(), "model config"), config.string());
  } catch (const Error&) {
    return;  // the model-folder reader names what is wrong with it
  }
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string()) return;
  const std::string schema = j["schema"].get<std::string>();
  if (schema.rfind("omn-audit/", 0) != 0) return;
  throw FormatError(path + ": an omn-audit run directory (its config.json is " + schema + "), not a model folder: give one of " +
                    "its checkpoints (" + (fs::path(path) / "final.pt").string() + "), or `omn-audit track " + path +
                    "` for all of them");
}

}  // namespace omn::audit
