// The sweep journal: one JSON line per finished condition, each written and fsync'd before the
// next begins, so that a crash or kill -9 loses at most the condition in flight. A torn last line
// (killed mid-write) is ignored on reading. No libtorch.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::intervene {

struct JournalContents {
  nlohmann::json header;                 // the first line
  std::vector<nlohmann::json> records;   // finished conditions, in order
};

// Throws FormatError naming the file and line for anything but a torn last line.
JournalContents readJournal(const std::string& path);

class Journal {
 public:
  // Creates the file with `header` as its first line, or (append) opens an existing one.
  Journal(const std::string& path, const nlohmann::json& header, bool append);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const nlohmann::json& record);  // write + fsync
  const std::string& path() const { return path_; }

 private:
  void writeLine(const nlohmann::json& j);
  std::string path_;
  int fd_ = -1;
};

// Which of the header's identity fields differ ("manifest sha256 ...; checkpoint sha256 ..."), or "".
std::string journalMismatch(const nlohmann::json& journal_header, const nlohmann::json& current_header);

}  // namespace omn::intervene
