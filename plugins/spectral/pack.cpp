#include "onnxport/op_pack.h"
#include "spectral.h"

ONNXPORT_OP_PACK(spectral, "1.0.0") {
  onnxport::spectral::add_complex_arithmetic(r);
  onnxport::spectral::add_complex_creation(r);
  onnxport::spectral::add_complex_layout(r);
  onnxport::spectral::add_fft(r);
  onnxport::spectral::add_stft(r);
}
