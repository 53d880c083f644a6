// A read-only memory map of a whole file. The checkpoint is never written: the map is
// PROT_READ and MAP_PRIVATE, so even a bug cannot reach the file. Others can still change it
// under a long run: the map remembers the file's identity (file_identity.h) so that the run can
// ask whether it still reads the file it opened, and a read past the end of a file truncated
// while mapped ends with a message naming it and exit 4 (src/io/mapping_guard.cpp), not SIGBUS.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "omn/io/file_identity.h"

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
  const FileIdentity& identity() const { return identity_; }  // as opened

  // Checked access: throws FormatError naming the file and the range when [offset, offset+len)
  // is not inside the file. Overflow-safe.
  const std::uint8_t* span(std::uint64_t offset, std::uint64_t len, const char* what) const;
  // Copies [offset, offset+len) into `out` through the descriptor (pread), not the mapping: no page
  // of the map becomes part of the process (a long scan that must not grow its RSS). Throws
  // FormatError naming the file for a range past the end or a failed read.
  void read(std::uint64_t offset, std::size_t len, std::uint8_t* out) const;

  // "" while the mapped file (fstat of the descriptor held open) and the path (stat) are both
  // still the file as opened; otherwise what changed ("size 123 -> 45 bytes (truncated?)",
  // "modified (mtime ...)", "replaced by another file ...", "removed").
  std::string change() const;

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;  // kept open: fstat tells what became of the mapped inode even after a rename
  FileIdentity identity_;
  int guard_slot_ = -1;
};

// Throws IntegrityError "<what> <path> changed during the run (noticed <when>): <change>" when
// change() is not empty.
void requireUnchanged(const MappedFile& f, const std::string& what, const std::string& when);

}  // namespace omn::io
