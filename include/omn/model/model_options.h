// The model options a user chooses (--attention, --dtype; a manifest's /model/attention,
// /model/dtype), as types: parsed once at the edge through these tables, carried down as values,
// turned into a path and a scalar type where the model is built. No libtorch.
#pragma once
#include <array>

#include "omn/io/choice.h"

namespace omn::model {

// The attention path asked for; chooseAttention() (attention.h) decides what runs.
enum class AttentionRequest { Auto, Flash, Blockwise, PerDocument, Masked };
inline constexpr std::array<io::Named<AttentionRequest>, 5> kAttentionRequests{{{"auto", AttentionRequest::Auto},
                                                                                {"flash", AttentionRequest::Flash},
                                                                                {"blockwise", AttentionRequest::Blockwise},
                                                                                {"per-document", AttentionRequest::PerDocument},
                                                                                {"masked", AttentionRequest::Masked}}};

// The working dtype asked for; auto: the checkpoint's floating-point type (fp32 for others).
enum class DtypeRequest { Auto, BF16, FP16, FP32 };
inline constexpr std::array<io::Named<DtypeRequest>, 4> kDtypeRequests{{{"auto", DtypeRequest::Auto},
                                                                        {"bf16", DtypeRequest::BF16},
                                                                        {"fp16", DtypeRequest::FP16},
                                                                        {"fp32", DtypeRequest::FP32}}};

}  // namespace omn::model
