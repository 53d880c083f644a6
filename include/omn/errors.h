// Typed errors of the omn library. Only tools/omn-audit/main.cpp turns them into
// messages and exit codes (see exitCodeFor and README "Exit codes").
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace omn {

enum ExitCode : int {
  kExitOk = 0,
  kExitUnexpected = 1,
  kExitInvalidInput = 2,  // FormatError, UsageError
  kExitRegression = 3,    // RegressionFound
  kExitIntegrity = 4,     // IntegrityError
  kExitIo = 5,            // IoError
  kExitInterrupted = 130, // Interrupted (SIGINT/SIGTERM): the journal is valid, --resume continues
};

// Base of every error the library throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual ExitCode exitCode() const noexcept { return kExitUnexpected; }
};

// A file is not what it claims to be: names the file, the place (byte offset, tensor name,
// JSON pointer) and what was expected against what was found.
class FormatError : public Error {
 public:
  using Error::Error;
  ExitCode exitCode() const noexcept override { return kExitInvalidInput; }
};

// The command line or a config asks for something impossible.
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exitCode() const noexcept override { return kExitInvalidInput; }
};

// Several mistakes in one document, reported together (io::ErrorList): what() is the header and
// each item on its own indented line; the CLI escapes the header and each item apart, so no item's
// text (a path, a value from the document) can start a line of its own.
class UsageErrors : public UsageError {
 public:
  UsageErrors(std::string header, std::vector<std::string> items)
      : UsageError(joined(header, items)), header_(std::move(header)), items_(std::move(items)) {}
  const std::string& header() const noexcept { return header_; }
  const std::vector<std::string>& items() const noexcept { return items_; }

 private:
  static std::string joined(const std::string& header, const std::vector<std::string>& items) {
    std::string s = header;
    for (const auto& i : items) s += "\n  " + i;
    return s;
  }
  std::string header_;
  std::vector<std::string> items_;
};

// A profile drifted from its baseline (the CI regression check).
class RegressionFound : public Error {
 public:
  using Error::Error;
  ExitCode exitCode() const noexcept override { return kExitRegression; }
};

// A hash did not match, or a restore was not bitwise.
class IntegrityError : public Error {
 public:
  using Error::Error;
  ExitCode exitCode() const noexcept override { return kExitIntegrity; }
};

// The system failed a read or write the input and options were right for: disk full, a read
// error, a rename refused. Not the user's usage (exit 2), not the tool's bug (exit 1).
class IoError : public Error {
 public:
  using Error::Error;
  ExitCode exitCode() const noexcept override { return kExitIo; }
};

// A sweep stopped by SIGINT/SIGTERM at a sequence boundary; finished conditions are journaled.
class Interrupted : public Error {
 public:
  using Error::Error;
  ExitCode exitCode() const noexcept override { return kExitInterrupted; }
};

}  // namespace omn
