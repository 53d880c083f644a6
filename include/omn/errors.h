// Typed errors of the omn library. Only tools/omn-audit/main.cpp turns them into
// messages and exit codes (see exitCodeFor and README "Exit codes").
#pragma once
#include <stdexcept>
#include <string>

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
