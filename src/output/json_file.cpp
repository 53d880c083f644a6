#include "omn/output/json_file.h"

#include <filesystem>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <iostream>
#include <sstream>

#include "omn/errors.h"
#include "omn/io/model_folder.h"

namespace omn::output {

std::optional<int> standardStream(const std::string& path) {
  if (path == "-") return 1;
  // follow symbolic links one hop at a time: /dev/stdout -> /proc/self/fd/1, or a user's link to it
  std::filesystem::path p = path;
  for (int hop = 0; hop < 16; ++hop) {
    const std::string s = p.lexically_normal().string();
    if (s == "/dev/stdout") return 1;
    if (s == "/dev/stderr") return 2;
    for (const char* prefix : {"/proc/self/fd/", "/dev/fd/"}) {
      const std::string pre = prefix;
      if (s.size() > pre.size() && s.compare(0, pre.size(), pre) == 0 &&
          s.find_first_not_of("0123456789", pre.size()) == std::string::npos) {
        const int fd = std::atoi(s.c_str() + pre.size());
        if (fd == 1 || fd == 2) return fd;
      }
    }
    std::error_code ec;
    if (!std::filesystem::is_symlink(p, ec)) return std::nullopt;
    const auto target = std::filesystem::read_symlink(p, ec);
    if (ec) return std::nullopt;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return std::nullopt;
}

bool isStdout(const std::string& path) { return standardStream(path) == 1; }

void checkJournaledOutput(const std::string& path, const std::string& what) {
  struct stat st {};
  if (standardStream(path) || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)))
    throw UsageError(what + " " + path + ": must be a file (a journal is kept beside it while the run is under way)");
}

namespace {

// Whether the file at `path` is a program or a shared library (ELF): the executable, its plugins,
// libtorch. No output of omn-audit is one, so replacing one is never an output's job. The whole
// identification is read (magic, class, byte order, version, padding, object type, version again),
// not the magic alone: a token file may begin with the ids 17791 17996 (the bytes 7f 45 4c 46).
bool isElfFile(const std::string& path) {
  unsigned char h[24] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(h), sizeof h) || std::memcmp(h, "\x7f" "ELF", 4) != 0) return false;
  const bool little = h[5] == 1;
  if ((h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2) || h[6] != 1) return false;
  for (int i = 9; i < 16; ++i)
    if (h[i] != 0) return false;
  const unsigned type = little ? h[16] | h[17] << 8 : h[17] | h[16] << 8;
  const unsigned version = little ? h[20] | h[21] << 8 | h[22] << 16 | static_cast<unsigned>(h[23]) << 24
                                  : h[23] | h[22] << 8 | h[21] << 16 | static_cast<unsigned>(h[20]) << 24;
  return type >= 1 && type <= 4 && version == 1;  // relocatable, executable, shared object, core
}

}  // namespace

void checkOutputPath(const std::string& path, bool force, const std::vector<std::string>& inputs) {
  if (standardStream(path)) return;
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
  // every file read through an input (a model folder's config.json and weights, the shards of an
  // index, a run directory's train.json) is an input; links resolved by stat (device and inode)
  for (const auto& in : inputs)
    for (const auto& f : io::filesReadThrough(in)) {
      struct stat s {};
      if (::stat(f.c_str(), &s) == 0 && s.st_dev == out.st_dev && s.st_ino == out.st_ino)
        throw UsageError("output " + path + " is the input " + f + (f == in ? "" : " (read through " + in + ")") +
                         ": refusing to write over an input, even with --force");
    }
  if (S_ISREG(out.st_mode) && isElfFile(path)) {
    std::error_code ec;
    const auto target = std::filesystem::canonical(path, ec);
    throw UsageError("output " + path + (!ec && std::filesystem::is_symlink(path, ec) ? " (a link to " + target.string() + ")" : "") +
                     " is a program or a shared library (an ELF file, such as omn-audit's plugins): refusing to write over it, even with --force");
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
  // /dev/null (or a terminal) twice: nothing is replaced
  auto discard = [](const std::string& p) {
    struct stat st {};
    return p != "-" && ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  };
  // "-", /dev/stdout, /dev/fd/1 and /proc/self/fd/1 are one stream whatever it is (a pipe resolves
  // to no path, so names are compared only when neither is a standard stream); a stream and a path
  // are the same when the stream is redirected to that very file (--json - --csv out.csv > out.csv)
  auto streamIsFile = [](int fd, const std::string& path) {
    struct stat f {}, p {};
    return ::fstat(fd, &f) == 0 && ::stat(path.c_str(), &p) == 0 && S_ISREG(f.st_mode) && S_ISREG(p.st_mode) &&
           f.st_dev == p.st_dev && f.st_ino == p.st_ino;
  };
  auto same = [&](const std::string& a, const std::string& b) {
    const auto sa = standardStream(a), sb = standardStream(b);
    if (sa && sb) return sa == sb;
    if (sa) return streamIsFile(*sa, b);
    if (sb) return streamIsFile(*sb, a);
    return !discard(a) && canonical(a) == canonical(b);
  };
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() && same(outputs[i].second, outputs[j].second))
        throw UsageError(outputs[i].first + " " + outputs[i].second + " and " + outputs[j].first + " " + outputs[j].second +
                         " are the same file: one output would replace the other");
}

namespace {

void writeAll(int fd, const std::string& text, const std::string& name) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot write " + name + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::vector<std::string> removeStaleTemporaries(const std::string& dir, const std::string& only) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || at == 0 || at + 5 >= name.size() ||
        name.find_first_not_of("0123456789", at + 5) != std::string::npos || !e.is_regular_file(ec) ||
        (!only.empty() && name.compare(0, at, only) != 0) || (!only.empty() && at != only.size()))
      continue;
    const long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
    // a writer that still runs (kill(pid, 0) succeeds or is merely not permitted) keeps its file
    if (pid > 0 && pid != ::getpid() && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    if (std::filesystem::remove(e.path(), ec)) removed.push_back(e.path().string());
  }
  return removed;
}

void writeFileAtomic(const std::string& given, const std::string& text) {
  if (const auto fd = standardStream(given)) {
    (*fd == 1 ? std::cout : std::cerr).flush();
    writeAll(*fd, text, *fd == 1 ? "standard output" : "standard error");
    return;
  }
  // a symbolic link keeps pointing where it did: the file it names is replaced, not the link
  std::string path = given;
  std::error_code ec;
  if (std::filesystem::is_symlink(given, ec)) {
    const auto target = std::filesystem::weakly_canonical(given, ec);
    if (!ec) path = target.string();
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    // never renamed over: a device or pipe is written in place (as root, a rename would have
    // replaced /dev/stdout itself with a regular file); a FIFO nobody reads is an error, not a hang
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO) throw UsageError("cannot write " + path + ": a FIFO with no reader");
    if (fd < 0) throw IoError("cannot write " + path + ": " + std::strerror(errno));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
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
  if (fd < 0) throw IoError("cannot write " + tmp + ": " + std::strerror(errno));
  try {
    writeAll(fd, text, path);  // the file the user asked for, not its temporary
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
    throw IoError("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
}

std::string dumpJson(const nlohmann::json& j) {
  // "schema" first, so `head` says what a document is; the other keys in sorted order, as always
  if (j.is_object() && j.contains("schema") && j.size() > 1) {
    nlohmann::ordered_json o;
    o["schema"] = j["schema"];
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "schema") o[it.key()] = it.value();
    return o.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace omn::output
