#include "omn/io/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"

namespace omn::io {

namespace {

constexpr const char* kChecksumKey = "journal_sha256";

std::string recordDigest(const nlohmann::json& record) {
  const std::string text = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return sha256Bytes(text.data(), text.size());
}

int lockedOpen(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("journal " + path + ": cannot open: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK)
      throw UsageError("journal " + path + " is in use by another omn-audit process (it holds the lock): wait for it to finish");
    throw IoError("journal " + path + ": cannot lock: " + std::strerror(e));
  }
  return fd;
}

}  // namespace

Journal Journal::create(const std::string& path, const nlohmann::json& header) {
  Journal j(path, lockedOpen(path, O_WRONLY | O_CREAT | O_EXCL));
  j.header_ = header;
  j.writeLine(header);
  return j;
}

Journal Journal::resume(const std::string& path) {
  Journal j(path, lockedOpen(path, O_RDWR));
  struct stat st {};
  if (::fstat(j.fd_, &st) != 0 || !S_ISREG(st.st_mode)) throw UsageError("journal " + path + ": not a regular file");
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::pread(j.fd_, &bytes[got], bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError("journal " + path + ": read failed: " + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  // everything after the last newline was torn by a kill or a full disk mid-write: not a record
  const std::size_t end = bytes.rfind('\n') == std::string::npos ? 0 : bytes.rfind('\n') + 1;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < end;) {
    const std::size_t nl = bytes.find('\n', at);
    const std::string line = bytes.substr(at, nl - at);
    at = nl + 1;
    ++line_no;
    const std::string where = "journal " + path + ": line " + std::to_string(line_no);
    nlohmann::json rec;
    try {
      rec = parseJson(line, where);
    } catch (const FormatError& e) {
      throw FormatError(std::string(e.what()) + "; the journal was edited or corrupted: remove it to start over");
    }
    if (!rec.is_object() || !rec.contains(kChecksumKey) || !rec[kChecksumKey].is_string())
      throw FormatError(where + ": no \"journal_sha256\" checksum; the journal was edited or written by another tool");
    const std::string stated = rec[kChecksumKey].get<std::string>();
    rec.erase(kChecksumKey);
    if (recordDigest(rec) != stated)
      throw FormatError(where + ": checksum mismatch: the record was edited or corrupted and cannot be trusted; remove the journal to start over");
    if (line_no == 1) j.header_ = std::move(rec);
    else j.records_.push_back(std::move(rec));
  }
  if (line_no == 0) throw FormatError("journal " + path + ": empty (no header line): remove it to start over");
  if (j.header_.value("schema", "") != "omn-audit/journal@1")
    throw FormatError("journal " + path + ": line 1: expected a header with schema \"omn-audit/journal@1\"");
  if (end < bytes.size() && ::ftruncate(j.fd_, static_cast<off_t>(end)) != 0)
    throw IoError("journal " + path + ": cannot cut its torn last line: " + std::strerror(errno));
  if (::lseek(j.fd_, 0, SEEK_END) < 0) throw IoError("journal " + path + ": seek failed: " + std::strerror(errno));
  return j;
}

Journal::Journal(Journal&& o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), header_(std::move(o.header_)), records_(std::move(o.records_)) {
  o.fd_ = -1;
}

Journal Journal::openForRun(const std::string& path, const nlohmann::json& header, bool resume, const std::string& what,
                            bool& resumed) {
  resumed = false;
  if (::access(path.c_str(), F_OK) != 0) return create(path, header);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {  // died before its header: nothing to keep
    ::unlink(path.c_str());
    return create(path, header);
  }
  Journal j = Journal::resume(path);  // locks (another process's journal is refused as in use) and checks every line
  if (resume) {
    resumed = true;
    return j;
  }
  if (!j.records().empty())
    throw UsageError("journal " + path + " of an interrupted " + what + " exists (" + std::to_string(j.records().size()) +
                     " finished record(s)): continue it with --resume, or remove it");
  // only a header: the run failed before it finished anything; a fresh one takes its place
  ::unlink(path.c_str());
  return create(path, header);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::writeLine(const nlohmann::json& record) {
  nlohmann::json j = record;
  j[kChecksumKey] = recordDigest(record);
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("journal " + path_ + ": write failed: " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) throw IoError("journal " + path_ + ": fsync failed: " + std::strerror(errno));
}

void Journal::append(const nlohmann::json& record) { writeLine(record); }

std::string journalMismatch(const nlohmann::json& old_h, const nlohmann::json& cur, const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    const auto a = old_h.value(k, nlohmann::json()), b = cur.value(k, nlohmann::json());
    if (a != b) out += std::string(out.empty() ? "" : "; ") + k + " was " + a.dump() + ", now " + b.dump();
  }
  return out;
}

ResumedJournal resumeJournal(const std::string& path, const nlohmann::json& header, bool resume, const std::string& what,
                             const std::vector<std::string>& identity, const std::function<bool(const nlohmann::json&)>& reuse) {
  bool resumed = false;
  ResumedJournal r{Journal::openForRun(path, header, resume, what, resumed), {}, {}, false};
  r.resumed = resumed;
  if (!resumed) return r;
  const std::string diff = journalMismatch(r.journal.header(), header, identity);
  if (!diff.empty()) throw UsageError("cannot resume from " + path + ": " + diff);
  const auto& records = r.journal.records();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& rec = records[i];
    if (reuse && !reuse(rec)) continue;
    const std::size_t line = i + 2;  // the header is line 1
    const auto id = rec.find("id");
    if (id == rec.end() || !id->is_string())
      throw FormatError("journal " + path + ": line " + std::to_string(line) + ": a record without a string \"id\"");
    r.done[id->get<std::string>()] = rec;
    r.lines[id->get<std::string>()] = line;
  }
  return r;
}

std::string ResumedJournal::where(const std::string& id) const {
  const auto it = lines.find(id);
  return "journal " + journal.path() + (it == lines.end() ? "" : ": line " + std::to_string(it->second));
}

}  // namespace omn::io
