// drk-task: relu
// drk-expect: hacked static.channel reply_tampered sandbox_crashed
// Tampering with the result channel: writes a reply frame of its own to the sandbox's reply pipe
// (descriptor 4, messages/sandbox.capnp framing: a 4-byte length, then a flat Cap'n Proto
// message) before the sandbox answers. A forger that guessed the request's id would stop the
// harness's clock early and have its outputs read before they are done; this one sends a
// well-formed reply with a null root (id 0). The static check refuses raw descriptor I/O; the
// harness refuses a reply to another request and replaces the sandbox.
#include <unistd.h>

#include <cstring>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  // Length 16; segment table: one segment of one word; the word: a null root pointer.
  unsigned char frame[20] = {16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
  std::memset(frame + 12, 0, 8);
  return write(4, frame, sizeof frame) == static_cast<ssize_t>(sizeof frame) ? DRK_OK : DRK_E_INTERNAL;
}
