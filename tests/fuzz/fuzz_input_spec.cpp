// `--input` specs: tensors (NAME:SHAPE[:DTYPE], NAME=FILE.npy), values (NAME:int=3, NAME:bool[]=1,0),
// None and nested collections (NAME:(A,[B,C],{k:D})). Any text must parse or throw onnxport::Error,
// and what parses must read back from its own text() as the same spec.
#include <cstdlib>

#include "fuzz_support.h"
#include "onnxport/errors.h"
#include "onnxport/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string first;
  try {
    first = onnxport::InputSpec::parse(onnxport::fuzz::text(data, size)).text();
  } catch (const onnxport::Error&) {
    return 0;
  }
  // text() is what configs written by onnxport hold: it must parse, to itself.
  if (onnxport::InputSpec::parse(first).text() != first) std::abort();
  return 0;
}
