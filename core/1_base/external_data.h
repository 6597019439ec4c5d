#pragma once
// ONNX files come from strangers (model hubs, mail, tickets), and an initializer kept as
// external data names the file its bytes are in. Every reader resolves that name here, so a
// file can only ever make onnxport read inside its own directory.
#include <cstdint>
#include <string>

#include "1_base/onnx_ir.h"

namespace onnxport::core {

struct ExternalDataRef {
  std::string path;     // the data file, model_dir joined with the location
  int64_t offset = 0;
  int64_t length = -1;  // -1: the entry gives none (the tensor's size decides)
};

enum class DataFile { MustExist, MayBeMissing };

// Reads a tensor's external-data entries and resolves its location against `model_dir` ("" is
// the current directory). Throws ModelError naming the tensor and the location when the
// location is empty, absolute, has a ".." component, leaves the directory through a symlink,
// names anything but a regular file (a directory, a FIFO, a device), or when offset/length are
// not non-negative integers. A missing file is refused only with DataFile::MustExist.
// `role` names the tensor in messages ("initializer", "the value of node 'c'").
ExternalDataRef resolve_external_data(const onnx::TensorProto& tensor, const std::string& model_dir,
                                      DataFile rule = DataFile::MustExist, const std::string& role = "initializer");

// resolve_external_data for every tensor of the model kept outside it: initializers, sparse
// initializers and tensor attributes (Constant's value...), in every sub-graph. Reads no data.
void refuse_external_data_outside(const onnx::ModelProto& model, const std::string& model_dir,
                                  DataFile rule = DataFile::MayBeMissing);

}  // namespace onnxport::core
