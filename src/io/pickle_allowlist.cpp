#include "omn/io/pickle_allowlist.h"

#include <map>

namespace omn::io {

bool lookupGlobal(const std::string& qualified, GlobalInfo* out) {
  const auto dot = qualified.rfind('.');
  return dot != std::string::npos && lookupGlobal(qualified.substr(0, dot), qualified.substr(dot + 1), out);
}

bool lookupGlobal(const std::string& module, const std::string& name, GlobalInfo* out) {
  using G = AllowedGlobal;
  static const std::map<std::string, GlobalInfo> table = [] {
    std::map<std::string, GlobalInfo> t;
    t["collections.OrderedDict"] = {G::OrderedDict};
    t["torch._utils._rebuild_tensor_v2"] = {G::RebuildTensorV2};
    t["torch._utils._rebuild_tensor_v3"] = {G::RebuildTensorV3};
    t["torch._utils._rebuild_parameter"] = {G::RebuildParameter};
    t["torch._utils._rebuild_parameter_with_state"] = {G::RebuildParameterWithState};
    t["torch.Size"] = {G::TorchSize};
    t["_codecs.encode"] = {G::CodecsEncode};
    t["builtins.set"] = {G::BuiltinSet};
    t["__builtin__.set"] = {G::BuiltinSet};
    const std::pair<const char*, DType> storages[] = {
        {"FloatStorage", DType::F32}, {"DoubleStorage", DType::F64}, {"HalfStorage", DType::F16},
        {"BFloat16Storage", DType::BF16}, {"LongStorage", DType::I64}, {"IntStorage", DType::I32},
        {"ShortStorage", DType::I16}, {"CharStorage", DType::I8}, {"ByteStorage", DType::U8},
        {"BoolStorage", DType::BOOL}, {"UntypedStorage", DType::U8}};
    for (const auto& [n, d] : storages) t[std::string("torch.") + n] = {G::StorageType, d};
    // Allowed by PyTorch, not read by us: refused with a clear "unsupported dtype" message.
    for (const char* n : {"ComplexFloatStorage", "ComplexDoubleStorage", "QInt8Storage", "QUInt8Storage",
                          "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage"})
      t[std::string("torch.") + n] = {G::StorageType, DType::U8, false};
    const std::pair<const char*, DType> dtypes[] = {
        {"float32", DType::F32}, {"float", DType::F32}, {"float64", DType::F64}, {"double", DType::F64},
        {"float16", DType::F16}, {"half", DType::F16}, {"bfloat16", DType::BF16}, {"int64", DType::I64},
        {"long", DType::I64}, {"int32", DType::I32}, {"int", DType::I32}, {"int16", DType::I16},
        {"short", DType::I16}, {"int8", DType::I8}, {"uint8", DType::U8}, {"bool", DType::BOOL}};
    for (const auto& [n, d] : dtypes) t[std::string("torch.") + n] = {G::DTypeValue, d};
    for (const char* n : {"complex64", "complex128", "cfloat", "cdouble", "qint8", "quint8", "qint32"})
      t[std::string("torch.") + n] = {G::DTypeValue, DType::U8, false};
    return t;
  }();
  auto it = table.find(module + "." + name);
  if (it == table.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace omn::io
