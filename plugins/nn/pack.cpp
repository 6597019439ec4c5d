#include "nn.h"
#include "onnxport/op_pack.h"

ONNXPORT_OP_PACK(nn, "1.0.0") {
  onnxport::nn::add_conv(r);
  onnxport::nn::add_pooling(r);
  onnxport::nn::add_normalization(r);
  onnxport::nn::add_linear(r);
  onnxport::nn::add_embedding(r);
  onnxport::nn::add_shuffle(r);
  onnxport::nn::add_softmax(r);
  onnxport::nn::add_dropout(r);
  onnxport::nn::add_upsample(r);
  onnxport::nn::add_padding(r);
  onnxport::nn::add_loss(r);
  onnxport::nn::add_margin_loss(r);
  onnxport::nn::add_attention(r);
  onnxport::nn::add_scaled_dot_product_attention(r);
}
