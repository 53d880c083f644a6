// torch.save zip archives: <prefix>/data.pkl (the restricted pickle), <prefix>/data/<key> storage
// records (stored, 64-byte aligned, mapped in place), <prefix>/byteorder, <prefix>/version.
#pragma once
#include "omn/io/checkpoint.h"

namespace omn::io {

// Reads ck.files[0] as a torch.save archive into ck (index, metadata, state_key).
void readTorchZip(Checkpoint& ck, const OpenOptions& options);

}  // namespace omn::io
