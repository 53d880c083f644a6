// The pickle allowlist: the only globals a checkpoint's pickle may name, modelled on PyTorch's
// torch/_weights_only_unpickler.py. Anything else is refused before any value is built.
#pragma once
#include <string>

#include "omn/io/tensor_index.h"

namespace omn::io {

enum class AllowedGlobal {
  OrderedDict,           // collections.OrderedDict
  RebuildTensorV2,       // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])
  RebuildTensorV3,       // torch._utils._rebuild_tensor_v3(..., hooks, dtype[, metadata])
  RebuildParameter,      // torch._utils._rebuild_parameter(data, requires_grad, hooks)
  RebuildParameterWithState,  // torch._utils._rebuild_parameter_with_state(data, requires_grad, hooks, state)
  StorageType,           // torch.<X>Storage, torch.UntypedStorage (persistent-id storage types)
  DTypeValue,            // torch.float32, torch.bfloat16, ...
  TorchSize,             // torch.Size
  CodecsEncode,          // _codecs.encode(str, "latin1") -> bytes (how protocol 2 writes bytes)
  BuiltinSet,            // builtins.set
};

struct GlobalInfo {
  AllowedGlobal kind;
  DType dtype = DType::U8;  // for StorageType / DTypeValue
  bool supported = true;    // allowlisted by PyTorch but a dtype we do not read (complex, quantized)
};

// Looks up "module.name"; returns false when the global is not allowed.
bool lookupGlobal(const std::string& module, const std::string& name, GlobalInfo* out);
// The same for a global as the unpickler records it, "module.name" (split at the last dot).
bool lookupGlobal(const std::string& qualified, GlobalInfo* out);

}  // namespace omn::io
