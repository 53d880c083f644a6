#include "omn/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "omn/errors.h"

namespace omn::io {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block the open: refused below
  if (fd < 0) throw FormatError(path + ": cannot open for reading: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FormatError(path + ": not a regular file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      throw FormatError(path + ": cannot map file: " + std::strerror(e));
    }
    data_ = static_cast<const std::uint8_t*>(p);
    // Parsers jump around (zip directory at the end, pickle, a few gain records): no read-ahead.
    ::madvise(const_cast<std::uint8_t*>(data_), size_, MADV_RANDOM);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

const std::uint8_t* MappedFile::span(std::uint64_t offset, std::uint64_t len, const char* what) const {
  if (offset > size_ || len > size_ - offset) {
    throw FormatError(path_ + ": " + what + " at byte " + std::to_string(offset) + " spans " +
                      std::to_string(len) + " bytes, past the end of the file (" +
                      std::to_string(size_) + " bytes)");
  }
  return data_ + offset;
}

}  // namespace omn::io
