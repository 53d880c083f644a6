// A reader for the zip archives torch.save writes: stored (uncompressed) entries, ZIP64, the
// central directory as the only truth about where entries are. Entries are spans of the mapped file.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "omn/io/mapped_file.h"

namespace omn::io {

struct ZipEntry {
  std::string name;
  std::uint64_t data_offset = 0;  // byte offset of the entry's data in the file
  std::uint64_t size = 0;         // uncompressed == compressed (stored)
  std::uint32_t crc32 = 0;
  std::uint16_t method = 0;       // 0 = stored; anything else is refused on access
};

class ZipReader {
 public:
  explicit ZipReader(const MappedFile& file);  // throws FormatError

  const std::vector<ZipEntry>& entries() const { return entries_; }  // central-directory order
  const ZipEntry* find(const std::string& name) const;
  // The entry's bytes; throws FormatError when missing or compressed.
  const std::uint8_t* data(const ZipEntry& e) const;
  // Same, and checks the CRC-32 (for the small records we parse: the pickle, byteorder).
  const std::uint8_t* dataChecked(const ZipEntry& e) const;

 private:
  const MappedFile& file_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, std::size_t> by_name_;
};

std::uint32_t crc32(const std::uint8_t* data, std::uint64_t len);

}  // namespace omn::io
