// Turns the SIGBUS of a read from a mapped file that was truncated under the run into a message
// naming the file and exit 4, instead of a silent signal death. Used by MappedFile only.
#pragma once
#include <cstddef>
#include <string>

namespace omn::io::mapping_guard {

// Registers [begin, begin+len) as a mapping of `path`; installs the SIGBUS handler on first use.
// Returns a slot for forget(), or -1 when the table is full (that mapping then keeps the default
// signal death; the table holds far more maps than a sharded checkpoint has files).
int remember(const void* begin, std::size_t len, const std::string& path);
void forget(int slot);

}  // namespace omn::io::mapping_guard
