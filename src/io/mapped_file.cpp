#include "omn/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mapping_guard.h"
#include "omn/errors.h"

namespace omn::io {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block the open: refused below
  if (fd_ < 0) throw FormatError(path + ": cannot open for reading: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw FormatError(path + ": not a regular file");
  }
  identity_ = FileIdentity::of(st);
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd_);
      throw FormatError(path + ": cannot map file: " + std::strerror(e));
    }
    data_ = static_cast<const std::uint8_t*>(p);
    // Parsers jump around (zip directory at the end, pickle, a few gain records): no read-ahead.
    ::madvise(const_cast<std::uint8_t*>(data_), size_, MADV_RANDOM);
    guard_slot_ = mapping_guard::remember(data_, size_, path_);
  }
}

void MappedFile::read(std::uint64_t offset, std::size_t len, std::uint8_t* out) const {
  span(offset, len, "a read");  // the range check, with its message
  while (len > 0) {
    const ssize_t n = ::pread(fd_, out, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw FormatError(path_ + ": reading " + std::to_string(len) + " bytes at byte " + std::to_string(offset) + " failed: " +
                        (n < 0 ? std::strerror(errno) : "end of file (truncated while open?)"));
    out += n, offset += static_cast<std::uint64_t>(n), len -= static_cast<std::size_t>(n);
  }
}

MappedFile::~MappedFile() {
  mapping_guard::forget(guard_slot_);
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  ::close(fd_);
}

const std::uint8_t* MappedFile::span(std::uint64_t offset, std::uint64_t len, const char* what) const {
  if (offset > size_ || len > size_ - offset) {
    throw FormatError(path_ + ": " + what + " at byte " + std::to_string(offset) + " spans " +
                      std::to_string(len) + " bytes, past the end of the file (" +
                      std::to_string(size_) + " bytes)");
  }
  return data_ + offset;
}

std::string MappedFile::change() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return std::string("cannot stat the open file: ") + std::strerror(errno);
  const std::string mapped = describeChange(identity_, FileIdentity::of(st));
  if (!mapped.empty()) return mapped;
  // the mapped inode is intact; does the path still name it (not renamed over, not removed)?
  const auto now = FileIdentity::ofPath(path_);
  if (!now) return "removed (the run still reads the file it opened, which no longer has this name)";
  return describeChange(identity_, *now);
}

void requireUnchanged(const MappedFile& f, const std::string& what, const std::string& when) {
  const std::string c = f.change();
  if (!c.empty()) throw IntegrityError(what + " " + f.path() + " changed during the run (noticed " + when + "): " + c);
}

}  // namespace omn::io
