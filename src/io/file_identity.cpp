#include "omn/io/file_identity.h"

#include <cstdio>
#include <ctime>

namespace omn::io {

namespace {
// UTC with nanoseconds: two writes within one second still read as different times.
std::string utc(std::int64_t sec, std::int64_t nsec) {
  const std::time_t t = static_cast<std::time_t>(sec);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(nsec));
  return buf;
}
}  // namespace

FileIdentity FileIdentity::of(const struct stat& st) {
  FileIdentity id;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::int64_t>(st.st_size);
  id.mtime_sec = static_cast<std::int64_t>(st.st_mtim.tv_sec);
  id.mtime_nsec = static_cast<std::int64_t>(st.st_mtim.tv_nsec);
  return id;
}

std::optional<FileIdentity> FileIdentity::ofPath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return of(st);
}

bool FileIdentity::operator==(const FileIdentity& o) const {
  return device == o.device && inode == o.inode && size == o.size && mtime_sec == o.mtime_sec && mtime_nsec == o.mtime_nsec;
}

std::string describeChange(const FileIdentity& before, const FileIdentity& now) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (before.device != now.device || before.inode != now.inode)
    add("replaced by another file (device " + std::to_string(before.device) + " inode " + std::to_string(before.inode) +
        " -> device " + std::to_string(now.device) + " inode " + std::to_string(now.inode) + ")");
  if (before.size != now.size)
    add("size " + std::to_string(before.size) + " -> " + std::to_string(now.size) + " bytes" +
        (now.size < before.size ? " (truncated?)" : " (appended to?)"));
  if (before.mtime_sec != now.mtime_sec || before.mtime_nsec != now.mtime_nsec)
    add("modified (mtime " + utc(before.mtime_sec, before.mtime_nsec) + " -> " + utc(now.mtime_sec, now.mtime_nsec) + ")");
  return out;
}

}  // namespace omn::io
