// content_hash() is SHA-256: the FIPS 180-2 test vectors (one block, the empty message, the
// 448-bit message whose padding needs a second block, a million bytes), and the same digest
// from threads that all make their first call at once.
#include "kernels/compile/content_hash.h"

#include <string>
#include <thread>
#include <vector>

#include "tests/doctest_drk.h"

using drk::compile::content_hash;

DRK_TEST_CASE("threads hashing at once, the first calls of the process among them, agree") {
  std::vector<std::string> digests(8);
  std::vector<std::thread> threads;
  for (auto& digest : digests) threads.emplace_back([&digest] { digest = content_hash("abc"); });
  for (auto& thread : threads) thread.join();
  for (const auto& digest : digests) DRK_CHECK(digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

DRK_TEST_CASE("content_hash is SHA-256 in 64 lowercase hex digits") {
  DRK_CHECK(content_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  DRK_CHECK(content_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  DRK_CHECK(content_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  DRK_CHECK(content_hash(std::string(1'000'000, 'a')) ==
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

DRK_TEST_CASE("bytes past a NUL count") {
  DRK_CHECK(content_hash(std::string("a\0b", 3)) != content_hash("a"));
}
