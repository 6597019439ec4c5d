#pragma once
// The entry points every op pack exports, and the macro that defines them:
//
//   ONNXPORT_OP_PACK(nn, "1.0.0") { add_conv(r); add_pooling(r); }
//
// The host reads onnxport_pack_info() first and refuses the pack (naming file, got, expected)
// if its SDK API version or ABI tag differ from the host's, before calling anything else.
#include "onnxport/registrar.h"

// Bumped whenever a header in sdk/include changes in a way that breaks compiled packs.
#ifndef ONNXPORT_SDK_API_VERSION
#define ONNXPORT_SDK_API_VERSION 2
#endif

#define ONNXPORT_STR_(x) #x
#define ONNXPORT_STR(x) ONNXPORT_STR_(x)

// Things that must agree between host and pack for C++ objects to cross the boundary.
#ifndef ONNXPORT_ABI_TAG
#if defined(__clang__)
#define ONNXPORT_COMPILER_TAG "clang"
#elif defined(__GNUC__)
#define ONNXPORT_COMPILER_TAG "gcc"
#else
#define ONNXPORT_COMPILER_TAG "unknown"
#endif
#define ONNXPORT_ABI_TAG \
  ONNXPORT_COMPILER_TAG  \
  "|libstdc++-cxx11abi=" ONNXPORT_STR(_GLIBCXX_USE_CXX11_ABI) "|sdk-api=" ONNXPORT_STR(ONNXPORT_SDK_API_VERSION)
#endif

#define ONNXPORT_EXPORT extern "C" __attribute__((visibility("default")))

namespace onnxport {

struct PackInfo {
  int api_version;
  const char* abi_tag;
  const char* id;
  const char* version;
};

using PackInfoFn = const PackInfo* (*)();
using PackRegisterFn = void (*)(Registrar&);

constexpr const char* kPackInfoSymbol = "onnxport_pack_info";
constexpr const char* kPackRegisterSymbol = "onnxport_pack_register";

// The host's own values, compiled into the SDK library.
int host_sdk_api_version();
const char* host_abi_tag();

}  // namespace onnxport

#define ONNXPORT_OP_PACK(ID, VERSION)                                                                              \
  static void onnxport_pack_body_(::onnxport::Registrar& r);                                                       \
  ONNXPORT_EXPORT const ::onnxport::PackInfo* onnxport_pack_info() {                                               \
    static const ::onnxport::PackInfo info{ONNXPORT_SDK_API_VERSION, ONNXPORT_ABI_TAG, ONNXPORT_STR(ID), VERSION}; \
    return &info;                                                                                                  \
  }                                                                                                                \
  ONNXPORT_EXPORT void onnxport_pack_register(::onnxport::Registrar& r) { onnxport_pack_body_(r); }                \
  static void onnxport_pack_body_(::onnxport::Registrar& r)
