// omn-audit hash FILE... | hash -c LIST: SHA-256 digests as sha256sum prints and checks them.
// "-" is standard input. A file that cannot be read is reported and the others still hashed or
// checked; the exit code then says the worst: 4 a digest did not match, 2 a file could not be
// read, 0 all well (lines of a list that are not checksum lines are warned about, as sha256sum -c does).
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>

#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/io/terminal_text.h"
#include "omn/output/progress.h"

namespace omn::cli {

namespace {

std::string digestOf(const std::string& f) {
  if (f == "-") return io::sha256StandardInput();
  std::unique_ptr<output::ProgressBar> bar;
  const std::string d = io::sha256File(f, [&](std::uint64_t done, std::uint64_t total) {
    if (!bar) bar = std::make_unique<output::ProgressBar>("sha256", total, output::ProgressBar::stderrIsTerminal() && total >= (256u << 20));
    bar->update(done);
  });
  if (bar) bar->finish();
  return d;
}

// sha256sum's line: "<digest>  <name>"; a name with a backslash or newline is escaped and the
// line starts with a backslash, so every line reads back as one name
std::string line(const std::string& digest, const std::string& name) {
  if (name.find_first_of("\\\n\r") == std::string::npos) return digest + "  " + name;
  std::string e;
  for (char c : name) e += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : std::string(1, c);
  return "\\" + digest + "  " + e;
}

bool unescape(std::string& name) {
  std::string o;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '\\') {
      o += name[i];
      continue;
    }
    if (++i == name.size()) return false;
    if (name[i] == '\\') o += '\\';
    else if (name[i] == 'n') o += '\n';
    else if (name[i] == 'r') o += '\r';
    else return false;
  }
  name = o;
  return true;
}

// sha256sum -c's switches: --quiet (no OK lines; also the CLI's -q), --status (nothing printed,
// the exit code says), --ignore-missing (a listed file that does not exist is skipped), --strict
// (a line that is not a checksum line is exit 2, not a warning).
struct CheckOptions {
  bool quiet = false, status = false, ignore_missing = false, strict = false;
};

int check(const std::string& list_path, const CheckOptions& o) {
  std::ifstream file;
  if (list_path != "-") {
    struct stat st {};  // a FIFO or a directory must not block or read as empty
    if (::stat(list_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      throw UsageError("-c " + list_path + ": not a regular file (a checksum list is a file, or - for standard input)");
    file.open(list_path);
    if (!file) throw UsageError("-c " + list_path + ": cannot open the checksum list");
  }
  std::istream& in = list_path == "-" ? std::cin : file;
  std::string text;
  int failed = 0, unreadable = 0, malformed = 0, checked = 0, skipped = 0;
  for (std::size_t n = 1; std::getline(in, text); ++n) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    const bool escaped = text[0] == '\\';
    const std::string body = escaped ? text.substr(1) : text;
    std::string name = body.size() > 66 ? body.substr(66) : "";
    const bool ok_form = body.size() > 66 && body[64] == ' ' && (body[65] == ' ' || body[65] == '*') && (!escaped || unescape(name));
    std::string digest;
    try {
      if (ok_form) digest = io::normaliseSha256(body.substr(0, 64), "line");
    } catch (const UsageError&) {
    }
    if (digest.empty()) {
      if (!o.status)
        std::cerr << "omn-audit: " << io::terminalSafe(list_path) << ":" << n << ": not a checksum line (expected \"<64 hex digits>  <file name>\")\n";
      ++malformed;
      continue;
    }
    struct stat st {};
    if (o.ignore_missing && name != "-" && ::stat(name.c_str(), &st) != 0 && errno == ENOENT) {
      ++skipped;
      continue;
    }
    ++checked;
    try {
      const bool match = digestOf(name) == digest;
      if (!o.status && (!match || !o.quiet)) std::cout << io::terminalSafe(name) << (match ? ": OK" : ": FAILED") << "\n";
      failed += match ? 0 : 1;
    } catch (const Error& e) {  // as sha256sum: --status drops the FAILED line, not the open error
      if (!o.status) std::cout << io::terminalSafe(name) << ": FAILED open or read\n";
      std::cerr << "omn-audit: " << io::terminalSafe(e.what()) << "\n";
      ++unreadable;
    }
  }
  if (!o.status) {
    if (malformed) std::cerr << "omn-audit: warning: " << malformed << " line(s) of " << io::terminalSafe(list_path) << " are not checksum lines\n";
    if (unreadable) std::cerr << "omn-audit: warning: " << unreadable << " listed file(s) could not be read\n";
    if (failed) std::cerr << "omn-audit: warning: " << failed << " computed checksum(s) did NOT match\n";
  }
  if (checked == 0 && o.ignore_missing && skipped > 0) {  // as sha256sum: silent under --status, exit 2 either way
    if (o.status) return kExitInvalidInput;
    throw UsageError("-c " + list_path + ": no file was verified (every listed file is missing and --ignore-missing skipped it)");
  }
  if (checked == 0) throw UsageError("-c " + list_path + ": no checksum lines found");
  // as sha256sum -c: lines that are not checksum lines (comments, a signature's armour) are warned
  // about, not failures, unless --strict
  return failed ? kExitIntegrity : unreadable || (o.strict && malformed) ? kExitInvalidInput : 0;
}

}  // namespace

Command addHashCommand(CLI::App& root) {
  auto* app = root.add_subcommand("hash", "print or check SHA-256 digests (as sha256sum does; - is standard input)");
  auto files = std::make_shared<std::vector<std::string>>();
  auto list = std::make_shared<std::string>();
  app->add_option("files", *files, "files to hash (- for standard input)");
  app->add_option("-c,--check", *list, "read digests and names from LIST (sha256sum's format, - for standard input) and check them");
  auto o = std::make_shared<CheckOptions>();
  app->add_flag("--quiet", o->quiet, "with -c: print no OK lines, only failures (the CLI's -q does the same)");
  app->add_flag("--status", o->status, "with -c: print nothing; the exit code says (0 all matched, 4 a mismatch, 2 unreadable)");
  app->add_flag("--ignore-missing", o->ignore_missing, "with -c: skip listed files that do not exist");
  app->add_flag("--strict", o->strict, "with -c: a line that is not a checksum line is exit 2, not a warning");
  app->footer("Examples:\n  omn-audit hash model.safetensors config.json > SHA256SUMS\n  omn-audit hash -c SHA256SUMS --quiet\n"
              "  omn-audit hash runs/tiny/checkpoints/step-??????.pt > checkpoints.sha256\n"
              "  cat model.pt | omn-audit hash");
  return {app, [files, list, o] {
            const bool any_check_flag = o->quiet || o->status || o->ignore_missing || o->strict;
            if (!list->empty()) {
              if (!files->empty()) throw UsageError("-c " + *list + ": give the list alone (the files are named in it)");
              CheckOptions co = *o;
              co.quiet = co.quiet || !spdlog::default_logger()->should_log(spdlog::level::info);  // omn-audit -q hash -c
              return check(*list, co);
            }
            if (any_check_flag) throw UsageError("--quiet, --status, --ignore-missing and --strict apply to -c LIST");
            if (files->empty() && !::isatty(STDIN_FILENO)) files->push_back("-");  // as sha256sum: standard input
            if (files->empty()) throw UsageError("hash: name the files to hash (- for standard input), or -c LIST");
            int unreadable = 0;
            for (const auto& f : *files) {
              try {
                std::cout << line(digestOf(f), f) << "\n";
              } catch (const Error& e) {  // reported; the other files are still hashed
                std::cerr << "omn-audit: " << io::terminalSafe(e.what()) << "\n";
                ++unreadable;
              }
            }
            return unreadable ? static_cast<int>(kExitInvalidInput) : 0;
          }};
}

}  // namespace omn::cli
