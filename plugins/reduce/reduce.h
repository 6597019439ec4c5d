#pragma once
// The reduce pack: reductions over dims (sum/mean/prod, extrema, logical, statistics, norms)
// and cumulative sums. reduce_common.h holds what the linalg pack shares with it.
#include "onnxport/registrar.h"

namespace onnxport::reduce {

void add_sums(Registrar& r);        // sum, mean, prod, logsumexp, count_nonzero, nansum
void add_extrema(Registrar& r);     // amax/amin/aminmax, max/min (all overloads), argmax/argmin, all/any
void add_statistics(Registrar& r);  // std, var, std_mean, var_mean, median
void add_norms(Registrar& r);       // norm, frobenius_norm, linalg_{vector,matrix,}_norm
void add_cumulative(Registrar& r);  // cumsum

}  // namespace onnxport::reduce
