// A read-only memory map of a whole file. The checkpoint is never written: the map is
// PROT_READ and MAP_PRIVATE, so even a bug cannot reach the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace omn::io {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws FormatError (missing, unreadable, a directory)
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Checked access: throws FormatError naming the file and the range when [offset, offset+len)
  // is not inside the file. Overflow-safe.
  const std::uint8_t* span(std::uint64_t offset, std::uint64_t len, const char* what) const;

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace omn::io
