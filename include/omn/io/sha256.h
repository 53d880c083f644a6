// SHA-256 of files and byte ranges through OpenSSL EVP, streamed in fixed-size reads so that
// hashing a 3.5 GB checkpoint keeps a few hundred KiB resident (a mapped pass would not).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace omn::io {

// The size of each read when a file is streamed (hashing; comparing two tensors' bytes): small
// enough that the buffer stays in the L2 cache of every CPU kind we run on (AMD Zen 3 has 512 KiB
// per core), so read() copies into cache and the digest reads from it. On the Zen 5 (1 MiB L2),
// 64 KiB to 4 MiB hash the 3.5 GB OMN-1 layout alike (docs/PERFORMANCE.md).
inline constexpr std::size_t kStreamPiece = std::size_t{128} << 10;

// Called after each chunk with (bytes done, bytes total).
using ProgressFn = std::function<void(std::uint64_t, std::uint64_t)>;

std::string sha256File(const std::string& path, const ProgressFn& progress = {});
std::string sha256Bytes(const void* data, std::size_t len);
std::string sha256StandardInput();  // "-" on the command line: standard input to its end

// Lower-case 64-hex check; throws UsageError naming `where` otherwise. Returns the lower-cased digest.
std::string normaliseSha256(const std::string& hex, const std::string& where);

// Throws IntegrityError "<path>: SHA-256 mismatch: expected X, got Y" when they differ.
void requireSha256(const std::string& path, const std::string& expected, const std::string& actual);

}  // namespace omn::io
