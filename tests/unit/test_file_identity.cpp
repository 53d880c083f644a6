// The checkpoint changing under a run (issue #9, class 4): a mapped file knows whether it is still
// the file it opened, and a read past the end of a file truncated while mapped is a message and
// exit 4, never a silent SIGBUS.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../support/temp_file.h"
#include "omn/errors.h"
#include "omn/io/file_identity.h"
#include "omn/io/hash_beside.h"
#include "omn/io/sha256.h"
#include "omn/io/mapped_file.h"

using omn::io::FileIdentity;
using omn::io::MappedFile;
using omn::test::TempDir;

namespace {
// Sets a file's mtime to a fixed second, so that a rewrite in the same tick still differs.
void setMtime(const std::string& path, long sec) {
  const struct timeval tv[2] = {{sec, 0}, {sec, 0}};
  ASSERT_EQ(::utimes(path.c_str(), tv), 0);
}
std::string mappingError(const MappedFile& f) {
  try {
    omn::io::requireUnchanged(f, "checkpoint", "after condition c1");
  } catch (const omn::IntegrityError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(FileIdentity, DescriptionNamesSizeTimeAndInode) {
  FileIdentity a;
  a.device = 1, a.inode = 7, a.size = 123, a.mtime_sec = 1700000000, a.mtime_nsec = 5;
  EXPECT_EQ(omn::io::describeChange(a, a), "");
  FileIdentity b = a;
  b.size = 45;
  EXPECT_EQ(omn::io::describeChange(a, b), "size 123 -> 45 bytes (truncated?)");
  b = a, b.size = 200;
  EXPECT_EQ(omn::io::describeChange(a, b), "size 123 -> 200 bytes (appended to?)");
  b = a, b.mtime_nsec = 6;  // one nanosecond is a change
  EXPECT_EQ(omn::io::describeChange(a, b),
            "modified (mtime 2023-11-14T22:13:20.000000005Z -> 2023-11-14T22:13:20.000000006Z)");
  b = a, b.inode = 9;
  EXPECT_NE(omn::io::describeChange(a, b).find("replaced by another file (device 1 inode 7 -> device 1 inode 9)"),
            std::string::npos);
}

TEST(MappedFileModification, UnchangedFileIsQuiet) {
  TempDir d;
  const std::string p = d.file("ck.bin", std::string(8192, 'a'));
  MappedFile f(p);
  EXPECT_EQ(f.change(), "");
  EXPECT_EQ(mappingError(f), "");
  EXPECT_EQ(f.identity().size, 8192);
}

TEST(MappedFileModification, TruncationIsNamed) {
  TempDir d;
  const std::string p = d.file("ck.bin", std::string(8192, 'a'));
  MappedFile f(p);
  ASSERT_EQ(::truncate(p.c_str(), 4096), 0);
  const std::string e = mappingError(f);
  EXPECT_NE(e.find("checkpoint " + p + " changed during the run (noticed after condition c1): size 8192 -> 4096 bytes (truncated?)"),
            std::string::npos)
      << e;
}

TEST(MappedFileModification, RewriteInPlaceIsNamedByItsTime) {
  TempDir d;
  const std::string p = d.file("ck.bin", std::string(8192, 'a'));
  setMtime(p, 1700000000);
  MappedFile f(p);
  FILE* w = std::fopen(p.c_str(), "r+b");  // same size, same inode, other bytes
  ASSERT_NE(w, nullptr);
  std::fputs("bbbb", w);
  std::fclose(w);
  const std::string e = mappingError(f);
  EXPECT_NE(e.find(p + " changed during the run"), std::string::npos) << e;
  EXPECT_NE(e.find("modified (mtime 2023-11-14T22:13:20.000000000Z -> "), std::string::npos) << e;
  EXPECT_EQ(e.find("size"), std::string::npos) << e;
}

TEST(MappedFileModification, ReplacementAndRemovalAreNamed) {
  TempDir d;
  const std::string p = d.file("ck.bin", std::string(8192, 'a'));
  MappedFile f(p);
  const std::string q = d.file("new.bin", std::string(8192, 'a'));
  ASSERT_EQ(std::rename(q.c_str(), p.c_str()), 0);  // what `torch.save(tmp); mv tmp ck` does
  EXPECT_NE(mappingError(f).find("replaced by another file"), std::string::npos) << mappingError(f);
  ASSERT_EQ(::unlink(p.c_str()), 0);
  EXPECT_NE(mappingError(f).find("removed"), std::string::npos) << mappingError(f);
}

// A read from the mapping after truncation raises SIGBUS in the kernel; it must end as exit 4
// with a message naming the file. Without the handler this dies by signal and the test fails.
TEST(MappedFileModificationDeathTest, ReadAfterTruncationIsExit4NotSigbus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir d;
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::string p = d.file("ck.bin", std::string(static_cast<std::size_t>(4 * page), 'a'));
  EXPECT_EXIT(
      {
        MappedFile f(p);
        if (::truncate(p.c_str(), page) != 0) std::_Exit(99);
        volatile std::uint8_t x = f.data()[2 * page + 5];  // past the new end: SIGBUS
        (void)x;
        std::_Exit(98);
      },
      ::testing::ExitedWithCode(omn::kExitIntegrity),
      "omn-audit: error: .*ck.bin changed during the run \\(truncated while mapped: byte [0-9]+ of the [0-9]+ bytes");
}

// Hash beside the parse: the digest, a mismatch that outranks the parse error it may have caused,
// and the hashing thread's own error given again by every later verify().
TEST(HashBeside, DigestMismatchOutranksTheParseErrorAndErrorsRepeat) {
  const omn::test::TempDir dir;
  const std::string f = dir.file("ck.bin", "abc");
  const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  omn::io::HashBeside ok(f, abc);
  EXPECT_EQ(ok.verify(), abc);
  EXPECT_EQ(ok.verify(), abc);

  omn::io::HashBeside wrong(f, std::string(64, '0'));
  EXPECT_THROW(wrong.guard([]() -> int { throw omn::FormatError("ck.bin: parse error"); }), omn::IntegrityError);
  omn::io::HashBeside right(f, abc);
  EXPECT_THROW(right.guard([]() -> int { throw omn::FormatError("ck.bin: parse error"); }), omn::FormatError);
  EXPECT_EQ(right.guard([] { return 7; }), 7);

  omn::io::HashBeside missing(dir.path() + "/absent.bin", abc);
  EXPECT_THROW(missing.verify(), omn::FormatError);
  EXPECT_THROW(missing.verify(), omn::FormatError);  // not "mismatch: got ''" the second time

  omn::io::HashBeside off(f, "", /*hash=*/false);
  EXPECT_EQ(off.verify(), "");
}
