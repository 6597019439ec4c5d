#include "intra_op_threads.h"

#include <ATen/Parallel.h>

namespace onnxport::core {

IntraOpThreads::IntraOpThreads(int wanted) : found_(at::get_num_threads()) {
  if (wanted <= 0 || wanted == found_) return;
  at::set_num_threads(wanted);
  changed_ = true;
}

IntraOpThreads::~IntraOpThreads() {
  if (changed_) at::set_num_threads(found_);
}

}  // namespace onnxport::core
