// The allowlisted constructors the restricted pickle VM applies (REDUCE, NEWOBJ): OrderedDict, the
// tensor and parameter rebuilders, torch.Size, _codecs.encode and set. Any other callable is refused.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "omn/io/pickle_allowlist.h"
#include "pickle_machine.h"

namespace omn::io::detail {

std::vector<std::int64_t> Machine::intTuple(const PyValue& v, const char* what) {
  if (v.kind != K::Tuple && v.kind != K::List) fail(op_at_, std::string(what) + ": expected a tuple of ints");
  std::vector<std::int64_t> out;
  charge(sizeof(std::int64_t) * v.items.size());
  for (const auto& x : v.items) {
    if (x->kind != K::Int) fail(op_at_, std::string(what) + ": expected a tuple of ints");
    out.push_back(x->i);
  }
  return out;
}

PyPtr Machine::rebuildTensor(const std::vector<PyPtr>& a, bool v3) {
  const char* fn = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
  const std::size_t need = v3 ? 7 : 6;
  if (a.size() < need || a.size() > need + 1)
    fail(op_at_, std::string(fn) + ": expected " + std::to_string(need) + " or " + std::to_string(need + 1) +
                     " arguments, got " + std::to_string(a.size()));
  if (a[0]->kind != K::Storage) fail(op_at_, std::string(fn) + ": argument 0 must be a storage (BINPERSID)");
  if (a[1]->kind != K::Int) fail(op_at_, std::string(fn) + ": storage offset must be an int");
  charge(sizeof(PyTensor));
  auto t = std::make_shared<PyTensor>();
  t->storage = a[0]->storage;
  t->dtype = t->storage->dtype;
  t->offset = a[1]->i;
  t->size = intTuple(*a[2], "tensor size");
  t->stride = intTuple(*a[3], "tensor stride");
  if (v3) {
    if (a[6]->kind != K::Global) fail(op_at_, "_rebuild_tensor_v3: argument 6 must be a dtype");
    GlobalInfo gi;
    if (!lookupGlobal(a[6]->s, &gi) || gi.kind != AllowedGlobal::DTypeValue)
      fail(op_at_, "_rebuild_tensor_v3: argument 6 must be a dtype");
    if (!gi.supported) fail(op_at_, "tensor dtype " + a[6]->s + " is not supported by omn-audit");
    t->dtype = gi.dtype;
  }
  auto v = mk(K::Tensor);
  v->tensor = std::move(t);
  return v;
}

PyPtr Machine::reduce(const PyValue& callable, const PyValue& args, const char* how) {
  if (callable.kind != K::Global) fail(op_at_, std::string(how) + " on a value that is not an allowlisted global");
  if (args.kind != K::Tuple) fail(op_at_, std::string(how) + " of " + callable.s + ": arguments must be a tuple");
  GlobalInfo gi;
  if (!lookupGlobal(callable.s, &gi))
    fail(op_at_, "global '" + callable.s + "' is not allowed");  // unreachable: GLOBAL checked it
  const auto& a = args.items;
  switch (gi.kind) {
    case AllowedGlobal::OrderedDict: {
      auto d = mk(K::Dict);
      d->ordered = true;
      if (!a.empty()) fail(op_at_, "OrderedDict() with arguments is not what torch.save writes");
      return d;
    }
    case AllowedGlobal::RebuildTensorV2: return rebuildTensor(a, false);
    case AllowedGlobal::RebuildTensorV3: return rebuildTensor(a, true);
    case AllowedGlobal::RebuildParameter:
    case AllowedGlobal::RebuildParameterWithState: {
      if (a.empty() || a[0]->kind != K::Tensor) fail(op_at_, callable.s + ": argument 0 must be a tensor");
      auto v = mk(K::Tensor);
      charge(sizeof(PyTensor) + 2 * sizeof(std::int64_t) * a[0]->tensor->size.size());
      v->tensor = std::make_shared<PyTensor>(*a[0]->tensor);
      v->tensor->parameter = true;
      return v;
    }
    case AllowedGlobal::TorchSize: {
      if (a.size() != 1) fail(op_at_, "torch.Size: expected one tuple argument");
      auto v = mk(K::Tuple);
      intTuple(*a[0], "torch.Size");
      charge(kSlotCost * a[0]->items.size());
      v->items = a[0]->items;
      return v;
    }
    case AllowedGlobal::CodecsEncode: {
      if (a.size() != 2 || a[0]->kind != K::Str || a[1]->kind != K::Str || a[1]->s != "latin1")
        fail(op_at_, "_codecs.encode: expected (str, 'latin1')");
      // The str holds code points < 256 as UTF-8; latin1-encode them back into bytes.
      auto v = mk(K::Bytes);
      const std::string& s = a[0]->s;
      charge(s.size());
      for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) v->s.push_back(static_cast<char>(c));
        else if ((c & 0xE0) == 0xC0 && i + 1 < s.size() && c <= 0xC3) {
          v->s.push_back(static_cast<char>(((c & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F)));
          ++i;
        } else fail(op_at_, "_codecs.encode: character outside latin-1");
      }
      return v;
    }
    case AllowedGlobal::BuiltinSet: {
      auto v = mk(K::Set);
      if (a.size() == 1) {
        if (a[0]->kind != K::List && a[0]->kind != K::Tuple) fail(op_at_, "set(): expected a list");
        charge(kSlotCost * a[0]->items.size());
        v->items = a[0]->items;
      } else if (!a.empty()) fail(op_at_, "set(): expected at most one argument");
      return v;
    }
    case AllowedGlobal::StorageType:
    case AllowedGlobal::DTypeValue: break;
  }
  fail(op_at_, std::string(how) + " of '" + callable.s + "' is not allowed (it is not a constructor)");
}

}  // namespace omn::io::detail
