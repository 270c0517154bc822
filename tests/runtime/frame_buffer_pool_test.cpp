#include "runtime/transport/frame_buffer_pool.h"

#include <memory>

#include "tests/doctest_drk.h"

namespace drk::runtime {
namespace {

DRK_TEST_CASE("a FrameBufferPool hands out the buffer that came back last, and a large enough one") {
  const auto pool = std::make_shared<FrameBufferPool>();
  const FrameBufferPool::Buffer older = pool->take(1000);
  const FrameBufferPool::Buffer newer = pool->take(1000);
  const FrameBufferPool::Buffer large = pool->take(FrameBufferPool::kMinBufferBytes * 2);
  DRK_CHECK(older.capacity == FrameBufferPool::kMinBufferBytes);
  DRK_CHECK(large.capacity == FrameBufferPool::kMinBufferBytes * 2);
  FrameBufferPool::give_back(older.data);
  FrameBufferPool::give_back(large.data);
  FrameBufferPool::give_back(newer.data);

  const FrameBufferPool::Buffer again = pool->take(1000);
  DRK_CHECK(again.data == newer.data);
  const FrameBufferPool::Buffer larger = pool->take(FrameBufferPool::kMinBufferBytes + 1);
  DRK_CHECK(larger.data == large.data);  // the small ones after it do not fit
  const FrameBufferPool::Buffer last = pool->take(1000);
  DRK_CHECK(last.data == older.data);
  for (const auto& buffer : {again, larger, last}) FrameBufferPool::give_back(buffer.data);
}

}  // namespace
}  // namespace drk::runtime
