#pragma once
// libtorch pulls in glog, whose CHECK, CHECK_EQ, ... clash with doctest's. Include this first in
// every test file: glog's macros are defined (once, include guards keep them from coming back),
// dropped, and then doctest's are defined.
#include <c10/util/Logging.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE

#include <doctest/doctest.h>
