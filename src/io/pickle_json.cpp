// Pickled values as JSON, with the work bounded: shared references rendered once (then as
// {"$ref": pointer}), the text capped (then {"$omitted": ...}), the depth capped.
#include <cmath>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/pickle.h"
#include "omn/json_pointer.h"

namespace omn::io {
namespace {

using nlohmann::json;
using K = PyValue::Kind;

constexpr std::size_t kShortString = 64;  // shorter strings are written again where met again

const char* kindName(K k) {
  switch (k) {
    case K::List: return "list";
    case K::Tuple: return "tuple";
    case K::Set: return "set";
    case K::Dict: return "dict";
    case K::Str: return "str";
    case K::Bytes: return "bytes";
    default: return "value";
  }
}

class Renderer {
 public:
  explicit Renderer(const JsonRendering& how, bool refs) : how_(how), refs_(refs) {}

  json render(const PyValue& v, bool shared) {
    if (&v == how_.replace && how_.replacement) return *how_.replacement;
    const bool big = v.kind == K::List || v.kind == K::Tuple || v.kind == K::Set || v.kind == K::Dict ||
                     v.kind == K::Tensor || ((v.kind == K::Str || v.kind == K::Bytes) && v.s.size() >= kShortString);
    if (big && refs_) {
      if (auto it = first_.find(&v); it != first_.end()) {
        spend(it->second.size() + 12);
        return {{"$ref", it->second}};
      }
      if (shared) first_.emplace(&v, pointer());
    }
    if (spent_ > how_.max_chars && big) {
      const std::size_t n = v.kind == K::Dict ? v.dict.size() : v.kind == K::Str || v.kind == K::Bytes ? v.s.size() : v.items.size();
      if (v.kind == K::Tensor) return tensor(v);
      return omitted(kindName(v.kind), n);
    }
    switch (v.kind) {
      case K::None: spend(4); return nullptr;
      case K::Bool: spend(5); return v.b;
      case K::Int: spend(20); return v.i;
      case K::Float: spend(24); return std::isfinite(v.f) ? json(v.f) : json(nullptr);
      case K::Str: spend(v.s.size() + 2); return v.s;
      case K::Bytes: spend(20); return json{{"$bytes", v.s.size()}};
      case K::Global: spend(v.s.size() + 14); return json{{"$global", v.s}};
      case K::Storage: spend(v.storage->key.size() + 14); return json{{"$storage", v.storage->key}};
      case K::Tensor: return tensor(v);
      case K::List: case K::Tuple: case K::Set: {
        json a = json::array();
        Level level(*this);
        for (std::size_t i = 0; i < v.items.size(); ++i) {
          if (spent_ > how_.max_chars) {  // the rest in one marker: never one entry per item
            a.push_back(omitted("items", v.items.size() - i));
            break;
          }
          path_.back() = std::to_string(i);
          a.push_back(render(*v.items[i], v.items[i].use_count() > 1));
        }
        return a;
      }
      case K::Dict: {
        json o = json::object();
        Level level(*this);
        std::size_t i = 0;
        for (const auto& [k, x] : v.dict) {
          if (spent_ > how_.max_chars) {
            std::string key = "$omitted";
            while (o.contains(key)) key += "'";
            o[key] = omitted("entries", v.dict.size() - i)["$omitted"];
            break;
          }
          ++i;
          std::string key = k->kind == K::Str ? k->s : jsonText(*k);
          while (o.contains(key)) key += "'";  // two keys with one text: neither may hide the other
          spend(key.size() + 4);
          path_.back() = escapePointerToken(key);
          o[key] = render(*x, x.use_count() > 1);
        }
        return o;
      }
    }
    return nullptr;
  }

 private:
  struct Level {  // one more token on the path while a container's children are rendered
    Renderer& r;
    explicit Level(Renderer& r) : r(r) {
      if (static_cast<int>(r.path_.size()) >= r.how_.max_depth)
        throw FormatError(r.how_.where + (r.how_.where.empty() ? "" : ": ") + "pickled value at " + r.pointer() +
                          " nests deeper than " + std::to_string(r.how_.max_depth) + " levels: too deep to render as JSON");
      r.path_.emplace_back();
    }
    ~Level() { r.path_.pop_back(); }
  };

  json tensor(const PyValue& v) {
    json shape = json::array();
    for (auto s : v.tensor->size) shape.push_back(s);
    spend(40 + 20 * v.tensor->size.size());
    return json{{"$tensor", {{"dtype", dtypeName(v.tensor->dtype)}, {"shape", shape}}}};
  }
  json omitted(const char* type, std::size_t length) {
    spend(40);
    return {{"$omitted", {{"type", type}, {"length", length}}}};
  }
  std::string pointer() const {
    std::string p;
    for (const auto& t : path_) p += "/" + t;
    return p;
  }
  void spend(std::size_t n) { spent_ += n; }

  const JsonRendering& how_;
  const bool refs_;
  std::vector<std::string> path_;
  std::unordered_map<const PyValue*, std::string> first_;
  std::size_t spent_ = 0;
};

}  // namespace

json toJson(const PyValue& v, const JsonRendering& how) { return Renderer(how, true).render(v, false); }

std::string jsonText(const PyValue& v) {
  JsonRendering how;
  how.max_chars = 160;
  std::string s = Renderer(how, false).render(v, false).dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

}  // namespace omn::io
