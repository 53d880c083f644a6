// A journal of finished work: one JSON line per record, each written and fsync'd before the next
// piece of work begins, so that a crash, kill -9 or full disk loses at most the piece in flight.
// Used by `intervene` (one record per condition) and `study` (one per training run). No libtorch.
//
//   * Every line carries "journal_sha256", the SHA-256 of the line's record without that key:
//     an edited or corrupted record is an error (FormatError naming the file and line), never
//     trusted.
//   * A torn last line (killed mid-write) is not a record; on resume it is cut off before anything
//     is appended, so the next interruption cannot leave an unreadable journal.
//   * The file is held under an exclusive flock for the Journal's life: a second process resuming
//     the same output is refused (UsageError) instead of interleaving its lines.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::io {

class Journal {
 public:
  // Creates `path` (it must not exist) with `header` as its first line.
  static Journal create(const std::string& path, const nlohmann::json& header);
  // Locks an existing journal, checks every line, cuts a torn tail; header() and records() are
  // what it held. Nothing is appended until append() is called.
  static Journal resume(const std::string& path);
  // The journal of a run that `what` names ("run", "study"): created when there is none. One that
  // exists is locked and checked first (a running process's journal is "in use", never called
  // interrupted); then it is continued with `resume`, replaced when it holds only its header (a run
  // that failed before its first record has nothing to keep), and otherwise refused (UsageError).
  // `resumed` says whether the journal's records continue.
  static Journal openForRun(const std::string& path, const nlohmann::json& header, bool resume, const std::string& what,
                            bool& resumed);

  ~Journal();
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&&) = delete;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void append(const nlohmann::json& record);  // write + fsync
  const std::string& path() const { return path_; }
  const nlohmann::json& header() const { return header_; }
  const std::vector<nlohmann::json>& records() const { return records_; }

 private:
  Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void writeLine(const nlohmann::json& j);
  std::string path_;
  int fd_ = -1;
  nlohmann::json header_;
  std::vector<nlohmann::json> records_;
};

// Which of the named identity fields differ between two headers ("manifest_sha256 was ..., now
// ..."), or "".
std::string journalMismatch(const nlohmann::json& journal_header, const nlohmann::json& current_header,
                            const std::vector<std::string>& keys);

// The journal of a journaled run (a sweep, a study) and what it already finished: a fresh journal,
// or with `resume` an interrupted run's (Journal::openForRun) whose header matches this run's in
// every one of `identity` (UsageError "cannot resume from PATH: <journalMismatch>" otherwise), its
// records by their "id" -- those `reuse` accepts (all when empty); the others run again. The one
// definition of resuming that the sweep and the study share.
struct ResumedJournal {
  Journal journal;
  std::map<std::string, nlohmann::json> done;  // by "id"
  std::map<std::string, std::size_t> lines;     // the line of the journal each record of `done` is on
  bool resumed = false;                         // the journal's records continue
  const nlohmann::json* find(const std::string& id) const {
    const auto it = done.find(id);
    return it == done.end() ? nullptr : &it->second;
  }
  // "journal PATH: line N", where the record `id` was read (for messages about it)
  std::string where(const std::string& id) const;
};
ResumedJournal resumeJournal(const std::string& path, const nlohmann::json& header, bool resume, const std::string& what,
                             const std::vector<std::string>& identity,
                             const std::function<bool(const nlohmann::json&)>& reuse = {});

}  // namespace omn::io
