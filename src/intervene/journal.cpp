#include "omn/intervene/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "omn/errors.h"

namespace omn::intervene {

JournalContents readJournal(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FormatError("journal " + path + ": cannot open for reading");
  JournalContents c;
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  // a final line without its newline was torn by a kill mid-write: not a finished record
  in.clear();
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  std::string last_char(1, '\n');
  if (size > 0) {
    in.seekg(static_cast<std::streamoff>(size - 1));
    in.read(&last_char[0], 1);
  }
  if (!lines.empty() && last_char != "\n") lines.pop_back();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(lines[i]);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError("journal " + path + ": line " + std::to_string(i + 1) + " is not JSON: " + e.what());
    }
    if (i == 0) c.header = std::move(j);
    else c.records.push_back(std::move(j));
  }
  if (c.header.is_null() || c.header.value("schema", "") != "omn-audit/journal@1")
    throw FormatError("journal " + path + ": line 1: expected a header with schema \"omn-audit/journal@1\"");
  return c;
}

Journal::Journal(const std::string& path, const nlohmann::json& header, bool append) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : (O_CREAT | O_EXCL)), 0644);
  if (fd_ < 0) throw UsageError("journal " + path + ": cannot open for writing: " + std::strerror(errno));
  if (!append) writeLine(header);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::writeLine(const nlohmann::json& j) {
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UsageError("journal " + path_ + ": write failed: " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) throw UsageError("journal " + path_ + ": fsync failed: " + std::strerror(errno));
}

void Journal::append(const nlohmann::json& record) { writeLine(record); }

std::string journalMismatch(const nlohmann::json& old_h, const nlohmann::json& cur) {
  std::string out;
  for (const char* k : {"manifest_sha256", "checkpoint_sha256", "tokens_sha256", "model_code_fingerprint", "shard", "options"}) {
    const auto a = old_h.value(k, nlohmann::json()), b = cur.value(k, nlohmann::json());
    if (a != b) out += std::string(out.empty() ? "" : "; ") + k + " was " + a.dump() + ", now " + b.dump();
  }
  return out;
}

}  // namespace omn::intervene
