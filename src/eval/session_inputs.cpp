#include "omn/audit/digest_list.h"
#include "omn/data/token_set_writer.h"
#include "omn/eval/session_spec.h"
#include "omn/model/preset.h"

namespace omn::eval {

std::vector<std::string> sessionRunFiles(const SessionSpec& spec) {
  std::vector<std::string> in = {spec.tokens.path};
  if (!spec.tokens.path.empty()) in.push_back(data::tokenRecordPath(spec.tokens.path));
  if (!spec.tokens.offsets.empty()) in.push_back(spec.tokens.offsets);
  if (!spec.preset.empty() && !model::isBuiltinPreset(spec.preset)) in.push_back(spec.preset);
  return in;
}

std::vector<std::string> sessionInputFiles(const SessionSpec& spec) {
  std::vector<std::string> in = {spec.checkpoint};
  for (const auto& f : sessionRunFiles(spec)) in.push_back(f);
  if (!spec.digests_path.empty()) in.push_back(spec.digests_path);
  for (const auto& f : audit::listedFiles(spec.digests)) in.push_back(f);
  return in;
}

}  // namespace omn::eval
