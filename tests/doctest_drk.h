// The only way tests include doctest. Test targets are compiled with
// DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES because LibTorch defines its own CHECK (docs/pitfalls.md #1);
// these aliases cannot be redefined by LibTorch's headers.
#pragma once
#include <doctest/doctest.h>

#define DRK_TEST_CASE DOCTEST_TEST_CASE
#define DRK_SUBCASE DOCTEST_SUBCASE
#define DRK_CHECK DOCTEST_CHECK
#define DRK_CHECK_FALSE DOCTEST_CHECK_FALSE
#define DRK_CHECK_EQ DOCTEST_CHECK_EQ
#define DRK_CHECK_MESSAGE DOCTEST_CHECK_MESSAGE
#define DRK_REQUIRE DOCTEST_REQUIRE
#define DRK_REQUIRE_FALSE DOCTEST_REQUIRE_FALSE
#define DRK_REQUIRE_MESSAGE DOCTEST_REQUIRE_MESSAGE
#define DRK_FAIL DOCTEST_FAIL
#define DRK_MESSAGE DOCTEST_MESSAGE
#define DRK_INFO DOCTEST_INFO
#define DRK_CAPTURE DOCTEST_CAPTURE
