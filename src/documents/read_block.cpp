#include "omn/documents/read_block.h"

#include "json_fields.h"
#include "omn/documents/intervention_document.h"
#include "omn/documents/study_document.h"

namespace omn::documents {

template <class T>
T readBlock(const nlohmann::json& j, const std::string& label, const std::string& pointer) {
  T out{};
  try {
    fields::convert(j, out);
  } catch (const fields::FieldError& e) {
    const std::string at = pointer + e.pointer();
    throw FormatError(label + ": " + (at.empty() ? "/" : at) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(label + ": " + (pointer.empty() ? "/" : pointer) + ": " + fields::plainMessage(e));
  }
  return out;
}

// the parts a sweep's journal line holds
template MechanismTable readBlock<MechanismTable>(const nlohmann::json&, const std::string&, const std::string&);
template DivergenceSums readBlock<DivergenceSums>(const nlohmann::json&, const std::string&, const std::string&);
template std::vector<AppliedVector> readBlock<std::vector<AppliedVector>>(const nlohmann::json&, const std::string&, const std::string&);
template ConditionOp readBlock<ConditionOp>(const nlohmann::json&, const std::string&, const std::string&);
// the run records a study's journal holds
template StudyRun readBlock<StudyRun>(const nlohmann::json&, const std::string&, const std::string&);

}  // namespace omn::documents
