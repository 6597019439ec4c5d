#include "onnxport/op_pack.h"
#include "torchaudio_ops.h"

ONNXPORT_OP_PACK(torchaudio, "1.0.0") {
  onnxport::torchaudio::add_lfilter(r);
  onnxport::torchaudio::add_overdrive(r);
}
