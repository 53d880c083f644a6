#include "omn/report/json_file.h"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "omn/errors.h"

namespace omn::report {

nlohmann::json readJsonFile(const std::string& path, const std::string& what) {
  // stat first: opening a FIFO for reading would block until a writer came
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw FormatError(what + " " + path + ": cannot open for reading: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw FormatError(what + " " + path + ": not a regular file (a FIFO, device or directory)");
  std::ifstream in(path);
  if (!in) throw FormatError(what + " " + path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(what + " " + path + ": not valid JSON: " + e.what());
  }
}

void checkOutputPath(const std::string& path, bool force, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(path.c_str(), &out) != 0) return;
  for (const auto& in : inputs) {
    struct stat s {};
    if (::stat(in.c_str(), &s) == 0 && s.st_dev == out.st_dev && s.st_ino == out.st_ino)
      throw UsageError("output " + path + " is the input " + in + ": refusing to write over an input");
  }
  if (!force) throw UsageError("output " + path + " exists: refusing to overwrite it without --force");
  if (S_ISDIR(out.st_mode)) throw UsageError("output " + path + " is a directory");
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

void writeFileAtomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw UsageError("cannot write " + tmp + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
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
