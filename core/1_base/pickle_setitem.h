#pragma once
// Python pickles write a dict of one entry with SETITEM ('s'), an opcode libtorch 1.13's unpickler
// does not read ("Unknown opcode for unpickling at 0x73"): PyTorch 2's torch.save writes one for each
// Parameter that carries attributes (torch.export marks parameters `_dynamo_static_input_type`).
// Rewritten as the same entry under MARK ... SETITEMS ('u'), which every unpickler reads.
#include <string>

namespace onnxport::core {

// `pickle` with each SETITEM as MARK key value SETITEMS; the same bytes when it has none, and when it
// holds an opcode this rewrite does not know (the unpickler then reports what it finds).
std::string setitem_as_setitems(const std::string& pickle);

}  // namespace onnxport::core
