// Reading and writing JSON documents: outputs are written to a temporary file, fsync'd and renamed
// into place, never over an existing file without `force`, never over an input.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/io/json_document.h"

namespace omn::output {

// Throws FormatError naming the file (and the parse position) when it is missing or not JSON
// (io/json_document.h: depth-bounded; documents omn-audit wrote are read with documents::readDocument).
using io::readJsonFile;

// The standard stream (1 or 2) an output names: "-", /dev/stdout, /dev/stderr, /proc/self/fd/N,
// /dev/fd/N, or a symbolic link to one of them; written to directly, never renamed over.
std::optional<int> standardStream(const std::string& path);
// Standard output: the command then prints nothing else there (its text goes to stderr).
bool isStdout(const std::string& path);
// Outputs that keep a journal beside them (intervene, study) must be files.
void checkJournaledOutput(const std::string& path, const std::string& what);

// Throws UsageError when `path` exists and !force, or names the same file as one of `inputs` or is a
// program or shared library (an ELF file: omn-audit itself, its plugins), with --force or without.
void checkOutputPath(const std::string& path, bool force, const std::vector<std::string>& inputs);

// Throws UsageError when two of the named outputs ({"--json", path}, ...) are the same file (paths
// compared after resolving "." , ".." and symbolic links; empty paths skipped).
void checkDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Writes text atomically (tmp + fsync + rename). Call checkOutputPath first. "-" is standard output;
// an existing device or pipe (/dev/stdout, a FIFO) is written in place, never renamed over.
void writeFileAtomic(const std::string& path, const std::string& text);

// Removes the temporaries writeFileAtomic leaves in `dir` when its process dies mid-write
// (kill -9, SIGXFSZ, power loss): files named NAME.tmp.PID whose PID is not a running process.
// Returns the paths removed. Not recursive. `name`: only the temporaries of that file (NAME.tmp.PID).
std::vector<std::string> removeStaleTemporaries(const std::string& dir, const std::string& name = "");

// dump() with full precision, invalid UTF-8 replaced, two-space indent, trailing newline.
std::string dumpJson(const nlohmann::json& j);

}  // namespace omn::output

namespace omn::output {
// A finite number as itself, NaN/inf as null (the document carries a flag beside it).
inline nlohmann::json finiteOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace omn::output
