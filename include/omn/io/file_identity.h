// What tells, without reading a file, that it is still the file a run opened: its device, inode,
// size and modification time. Taken when a checkpoint is mapped and compared at the checkpoints of
// a long run (each sweep condition, the end of an evaluation), it names a truncation, a rewrite in
// place or a replacement for the cost of one stat(2).
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

namespace omn::io {

struct FileIdentity {
  std::uint64_t device = 0, inode = 0;
  std::int64_t size = 0;
  std::int64_t mtime_sec = 0, mtime_nsec = 0;

  static FileIdentity of(const struct stat& st);
  // stat(2) of the path now; nullopt when it no longer names anything.
  static std::optional<FileIdentity> ofPath(const std::string& path);

  bool operator==(const FileIdentity& o) const;
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

// "" when `now` equals `before`; otherwise what changed, most telling first:
// "size 123 -> 45 bytes (truncated?)", "modified (mtime 2024-... -> 2024-...)", "replaced (inode 7 -> 9)".
std::string describeChange(const FileIdentity& before, const FileIdentity& now);

}  // namespace omn::io
