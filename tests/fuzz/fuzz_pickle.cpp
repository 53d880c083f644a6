// libFuzzer: the restricted unpickler on arbitrary bytes never crashes, hangs or runs anything.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::uint8_t storage[64] = {};
  omn::io::PersistentLoad load = [](const omn::io::PyValue&, std::uint64_t) {
    auto v = std::make_shared<omn::io::PyValue>();
    v->kind = omn::io::PyValue::Kind::Storage;
    v->storage = std::make_shared<omn::io::PyStorage>();
    v->storage->data = storage;
    v->storage->numel = 16;
    v->storage->bytes = 64;
    v->storage->dtype = omn::io::DType::F32;
    return v;
  };
  try {
    auto v = omn::io::unpickle(data, size, "fuzz", load);
    (void)omn::io::toJson(*v);
  } catch (const omn::Error&) {
  }
  return 0;
}
