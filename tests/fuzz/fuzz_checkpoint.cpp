// libFuzzer: format detection, the zip reader, torch.save and safetensors parsing and tensor
// reading on arbitrary bytes (through a memfd, as the readers map files).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "omn/errors.h"
#include "omn/io/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memfd_create("ckpt", 0);
  if (fd < 0) return 0;
  if (size && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  try {
    auto ck = omn::io::openCheckpoint("/proc/self/fd/" + std::to_string(fd));
    for (const auto& t : ck->index.tensors())
      if (t.numel() <= (1 << 16)) (void)omn::io::readAsDouble(t);
  } catch (const omn::Error&) {
  }
  close(fd);
  return 0;
}
