// What a JSON Schema cannot say about a document of each kind: arrays that readers walk in step
// have equal lengths, records point at each other consistently. One function per kind; a kind
// without rules has none. Each throws FormatError "<label>: <pointer>: <what was expected>".
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "omn/documents/document.h"

namespace omn::documents {

// Every mechanism record (control and conditions) has one entry per layer or none at all; every
// result scores the control's sequences (the paired statistics need it).
void checkInterventionShape(const nlohmann::json& doc, const std::string& label);
// Checkpoints in step order, within the run; the last one is the one a resume starts from.
void checkTrainShape(const nlohmann::json& doc, const std::string& label);
// Every run in an arm of its own QK-norm setting; its trajectories one entry per step.
void checkStudyShape(const nlohmann::json& doc, const std::string& label);
// Every checkpoint holds every layer.
void checkTrackShape(const nlohmann::json& doc, const std::string& label);
// The non-finite list agrees with its count; layers in order.
void checkProfileShape(const nlohmann::json& doc, const std::string& label);

// The rules of `kind` (nothing for a kind without any).
void checkShape(const nlohmann::json& doc, DocumentKind kind, const std::string& label);

}  // namespace omn::documents
