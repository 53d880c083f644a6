#include "omn/report/json_file.h"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "omn/errors.h"

namespace omn::report {

bool isStdout(const std::string& path) { return path == "-"; }

void checkOutputPath(const std::string& path, bool force, const std::vector<std::string>& inputs) {
  if (isStdout(path)) return;
  struct stat out {};
  if (::stat(path.c_str(), &out) != 0) {
    // a new file: its directory must exist and be writable now, not after hours of compute
    const std::string parent = std::filesystem::path(path).parent_path().string();
    const std::string dir = parent.empty() ? "." : parent;
    struct stat d {};
    if (::stat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode))
      throw UsageError("output " + path + ": directory " + dir + " does not exist");
    if (::access(dir.c_str(), W_OK) != 0) throw UsageError("output " + path + ": directory " + dir + " is not writable");
    return;
  }
  for (const auto& in : inputs) {
    struct stat s {};
    if (::stat(in.c_str(), &s) == 0 && s.st_dev == out.st_dev && s.st_ino == out.st_ino)
      throw UsageError("output " + path + " is the input " + in + ": refusing to write over an input");
  }
  if (S_ISDIR(out.st_mode)) throw UsageError("output " + path + " is a directory");
  // a terminal, pipe or device (/dev/stdout, /dev/null) is written in place: nothing is replaced
  if (!S_ISREG(out.st_mode)) return;
  if (!force) throw UsageError("output " + path + " exists: refusing to overwrite it without --force");
}

void checkDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  auto canonical = [](const std::string& p) {
    std::error_code ec;
    const auto c = std::filesystem::weakly_canonical(p, ec);
    return ec ? std::filesystem::path(p).lexically_normal().string() : c.string();
  };
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() && canonical(outputs[i].second) == canonical(outputs[j].second))
        throw UsageError(outputs[i].first + " " + outputs[i].second + " and " + outputs[j].first + " " + outputs[j].second +
                         " are the same file: one output would replace the other");
}

namespace {

void writeAll(int fd, const std::string& text, const std::string& name) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError("cannot write " + name + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void writeFileAtomic(const std::string& path, const std::string& text) {
  if (isStdout(path)) {
    std::cout.flush();
    writeAll(STDOUT_FILENO, text, "standard output");
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    // never renamed over: a device or pipe is written in place (as root, a rename would have
    // replaced /dev/stdout itself with a regular file)
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
    try {
      writeAll(fd, text, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
  try {
    writeAll(fd, text, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw UsageError("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
}

std::string dumpJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace omn::report
