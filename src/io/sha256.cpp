#include "omn/io/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "omn/errors.h"

namespace omn::io {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

MdCtx newSha256() {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw Error("OpenSSL: cannot initialise SHA-256");
  return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx, md, &n) != 1) throw Error("OpenSSL: SHA-256 final failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(hex[md[i] >> 4]);
    out.push_back(hex[md[i] & 15]);
  }
  return out;
}

struct Fd {
  int fd;
  ~Fd() { if (fd >= 0) ::close(fd); }
};

}  // namespace

std::string sha256File(const std::string& path, const ProgressFn& progress) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};  // a FIFO must not block the open: refused below
  if (f.fd < 0) throw FormatError(path + ": cannot open for hashing: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw FormatError(path + ": not a regular file");
  const std::uint64_t total = static_cast<std::uint64_t>(st.st_size);
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  auto ctx = newSha256();
  constexpr std::size_t kChunk = kStreamPiece;
  std::vector<unsigned char> buf(kChunk);
  std::uint64_t done = 0;
  for (;;) {
    ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(path + ": read error at byte " + std::to_string(done) + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n));
    done += static_cast<std::uint64_t>(n);
    if (progress) progress(done, total);
  }
  return finish(ctx.get());
}

std::string sha256StandardInput() {
  auto ctx = newSha256();
  std::vector<unsigned char> buf(1u << 20);
  for (;;) {  // a pipe or terminal: read until end of input, as sha256sum does for "-"
    ssize_t n = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(std::string("standard input: read error: ") + std::strerror(errno));
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n));
  }
  return finish(ctx.get());
}

std::string sha256Bytes(const void* data, std::size_t len) {
  auto ctx = newSha256();
  EVP_DigestUpdate(ctx.get(), data, len);
  return finish(ctx.get());
}

std::string normaliseSha256(const std::string& hex, const std::string& where) {
  std::string out;
  out.reserve(hex.size());
  for (char c : hex) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  bool ok = out.size() == 64;
  for (char c : out) ok = ok && std::isxdigit(static_cast<unsigned char>(c));
  if (!ok) throw UsageError(where + ": expected a SHA-256 of 64 hex digits, got \"" + hex + "\"");
  return out;
}

void requireSha256(const std::string& path, const std::string& expected, const std::string& actual) {
  if (expected != actual)
    throw IntegrityError(path + ": SHA-256 mismatch: expected " + expected + ", got " + actual);
}

}  // namespace omn::io
