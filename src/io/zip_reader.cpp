#include "omn/io/zip_reader.h"

#include <array>
#include <cstring>

#include "omn/errors.h"

namespace omn::io {
namespace {

constexpr std::uint32_t kEocdSig = 0x06054b50, kZip64LocSig = 0x07064b50, kZip64EocdSig = 0x06064b50,
                        kCentralSig = 0x02014b50, kLocalSig = 0x04034b50;

std::uint16_t u16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
std::uint32_t u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
std::uint64_t u64(const std::uint8_t* p) { return u32(p) | (static_cast<std::uint64_t>(u32(p + 4)) << 32); }

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// A zip compression method by its name in the zip specification (APPNOTE 4.4.5), for messages.
std::string zipMethodName(std::uint16_t method) {
  switch (method) {
    case 8: return "deflate";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "LZMA";
    case 93: return "zstd";
    case 95: return "xz";
    default: return "method " + std::to_string(method);
  }
}

// 1. End of central directory: the last signature within the final 64 KiB + 22 bytes.
std::uint64_t findEndRecord(const MappedFile& file) {
  const std::string& path = file.path();
  const std::uint64_t size = file.size();
  if (size < 22) throw FormatError(path + ": " + std::to_string(size) + " bytes is too short for a zip archive");
  const std::uint64_t floor = size > 65557 ? size - 65557 : 0;
  for (std::uint64_t p = size - 22 + 1; p-- > floor;)
    if (u32(file.data() + p) == kEocdSig) return p;
  throw FormatError(path + ": no zip end-of-central-directory record in the last 64 KiB (truncated file?)");
}

struct CentralDirectory {
  std::uint64_t count, size, offset;
};

// 2. Where the central directory is, from the end record or, for ZIP64, from the record its
// locator (right before the end record) points at.
CentralDirectory locateCentralDirectory(const MappedFile& file, std::uint64_t eocd) {
  const std::string& path = file.path();
  const std::uint8_t* e = file.data() + eocd;
  CentralDirectory dir{u16(e + 10), u32(e + 12), u32(e + 16)};
  if (eocd >= 20 && u32(file.data() + eocd - 20) == kZip64LocSig) {
    const std::uint64_t z64 = u64(file.data() + eocd - 20 + 8);
    const std::uint8_t* z = file.span(z64, 56, "ZIP64 end-of-central-directory record");
    if (u32(z) != kZip64EocdSig)
      throw FormatError(path + ": byte " + std::to_string(z64) + ": expected the ZIP64 end-of-central-directory "
                        "signature 0x06064b50, found " + hex32(u32(z)));
    dir = {u64(z + 32), u64(z + 40), u64(z + 48)};
  } else if (dir.count == 0xFFFF || dir.size == 0xFFFFFFFFu || dir.offset == 0xFFFFFFFFu) {
    throw FormatError(path + ": zip end record says ZIP64 but no ZIP64 locator precedes it at byte " +
                      std::to_string(eocd >= 20 ? eocd - 20 : 0));
  }
  return dir;
}

// ZIP64 extra field: the 64-bit values replace exactly the 32-bit fields that are 0xFFFFFFFF.
void readZip64Extra(const std::string& path, const std::string& name, const std::uint8_t* x, std::uint16_t xlen,
                    std::uint64_t& usize, std::uint64_t& csize, std::uint64_t& local) {
  for (std::uint32_t xp = 0; xp + 4 <= xlen;) {
    const std::uint16_t id = u16(x + xp), len = u16(x + xp + 2);
    if (xp + 4ull + len > xlen) break;
    if (id == 0x0001) {
      const std::uint8_t* f = x + xp + 4;
      std::uint32_t fp = 0;
      auto take = [&](std::uint64_t& v) {
        if (v != 0xFFFFFFFFu) return;
        if (fp + 8 > len)
          throw FormatError(path + ": entry '" + name + "': ZIP64 extra field too short");
        v = u64(f + fp);
        fp += 8;
      };
      take(usize);
      take(csize);
      take(local);
    }
    xp += 4u + len;
  }
}

// 4. The local header gives the data offset (its own name and extra lengths may differ).
std::uint64_t dataOffset(const MappedFile& file, const std::string& name, std::uint64_t local) {
  const std::uint8_t* l = file.span(local, 30, ("local header of entry '" + name + "'").c_str());
  if (u32(l) != kLocalSig)
    throw FormatError(file.path() + ": byte " + std::to_string(local) + ": entry '" + name +
                      "': expected local header signature 0x04034b50, found " + hex32(u32(l)));
  return local + 30ull + u16(l + 26) + u16(l + 28);
}

// Central directory entry i, `pos` bytes into the directory; `entry_bytes` is set to its length there.
ZipEntry readCentralEntry(const MappedFile& file, const CentralDirectory& dir, const std::uint8_t* cd, std::uint64_t pos,
                          std::uint64_t i, std::uint64_t& entry_bytes) {
  const std::string& path = file.path();
  const std::uint64_t at = dir.offset + pos;
  if (dir.size - pos < 46)
    throw FormatError(path + ": byte " + std::to_string(at) + ": central directory entry " + std::to_string(i) +
                      " runs past the directory's end");
  const std::uint8_t* c = cd + pos;
  if (u32(c) != kCentralSig)
    throw FormatError(path + ": byte " + std::to_string(at) + ": expected central directory signature "
                      "0x02014b50, found " + hex32(u32(c)));
  ZipEntry ent;
  ent.method = u16(c + 10);
  ent.crc32 = u32(c + 16);
  std::uint64_t csize = u32(c + 20), usize = u32(c + 24), local = u32(c + 42);
  const std::uint16_t nlen = u16(c + 28), xlen = u16(c + 30), clen = u16(c + 32);
  if (dir.size - pos < 46ull + nlen + xlen + clen)
    throw FormatError(path + ": byte " + std::to_string(at) + ": central directory entry " + std::to_string(i) +
                      " names more bytes than the directory holds");
  ent.name.assign(reinterpret_cast<const char*>(c + 46), nlen);
  readZip64Extra(path, ent.name, c + 46 + nlen, xlen, usize, csize, local);
  if (csize != usize && ent.method == 0)
    throw FormatError(path + ": entry '" + ent.name + "': stored entry with compressed size " +
                      std::to_string(csize) + " != size " + std::to_string(usize));
  ent.size = csize;
  ent.data_offset = dataOffset(file, ent.name, local);
  file.span(ent.data_offset, ent.size, ("data of entry '" + ent.name + "'").c_str());
  entry_bytes = 46ull + nlen + xlen + clen;
  return ent;
}

}  // namespace

std::uint32_t crc32(const std::uint8_t* data, std::uint64_t len) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint64_t i = 0; i < len; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

ZipReader::ZipReader(const MappedFile& file) : file_(file) {
  const std::uint64_t eocd = findEndRecord(file);
  const CentralDirectory dir = locateCentralDirectory(file, eocd);
  const std::uint8_t* cd = file.span(dir.offset, dir.size, "zip central directory");
  if (dir.count > dir.size / 46)
    throw FormatError(file.path() + ": zip central directory of " + std::to_string(dir.size) + " bytes cannot hold " +
                      std::to_string(dir.count) + " entries");
  // 3. Central directory entries.
  std::uint64_t pos = 0;
  entries_.reserve(static_cast<std::size_t>(dir.count));
  for (std::uint64_t i = 0; i < dir.count; ++i) {
    std::uint64_t entry_bytes = 0;
    ZipEntry ent = readCentralEntry(file, dir, cd, pos, i, entry_bytes);
    if (by_name_.count(ent.name)) throw FormatError(file.path() + ": duplicate zip entry '" + ent.name + "'");
    by_name_.emplace(ent.name, entries_.size());
    entries_.push_back(std::move(ent));
    pos += entry_bytes;
  }
}

const ZipEntry* ZipReader::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

const std::uint8_t* ZipReader::data(const ZipEntry& e) const {
  if (e.method != 0)
    throw FormatError(file_.path() + ": entry '" + e.name + "' is compressed (" + zipMethodName(e.method) + ", zip method " +
                      std::to_string(e.method) + "); torch.save stores records uncompressed: the file was re-zipped since, save it "
                      "with torch.save again");
  return file_.span(e.data_offset, e.size, ("data of entry '" + e.name + "'").c_str());
}

const std::uint8_t* ZipReader::dataChecked(const ZipEntry& e) const {
  const std::uint8_t* p = data(e);
  const std::uint32_t got = crc32(p, e.size);
  if (got != e.crc32)
    throw FormatError(file_.path() + ": entry '" + e.name + "' at byte " + std::to_string(e.data_offset) +
                      ": CRC-32 " + hex32(got) + " does not match the recorded " + hex32(e.crc32) +
                      " (corrupted file)");
  return p;
}

}  // namespace omn::io
