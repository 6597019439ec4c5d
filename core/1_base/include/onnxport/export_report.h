#pragma once
// What an export reports, stage by stage (onnxport/export.h's Exporter fills it; onnxport/report.h
// writes it as JSON or Markdown), and the progress it announces while it runs.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace onnxport {

// One pipeline stage of an export (load, prepare, resolve, convert, prove dynamic axes,
// onnx passes, write, check): wall time, and the process's peak resident set size when it ended.
struct StageReport {
  std::string name;
  double seconds = 0;
  size_t peak_rss_bytes = 0;
  bool failed = false;  // the stage threw: the export stopped here
};

// An intermediate value made a graph output by --extra-outputs.
struct ExtraOutputReport {
  std::string spec;    // as given: "layer3.1"
  std::string kind;    // how the spec was read: "module", "torchscript value" or "onnx value"
  std::string output;  // the graph output's name
  std::string type;    // "float32[1,256,14,14]"
};

struct ExportReport {
  std::string output_path;
  size_t node_count = 0;
  size_t initializer_count = 0;
  size_t initializer_bytes = 0;
  std::map<std::string, size_t> op_histogram;  // ONNX op_type -> count
  // op pack -> torch op -> ONNX nodes of the written graph it made ("" pack: the core's own nodes)
  std::map<std::string, std::map<std::string, size_t>> pack_ops;
  size_t file_bytes = 0;           // the written .onnx file
  size_t external_data_bytes = 0;  // the external data file, if any
  std::string checker = "skipped";  // "ok" once the ONNX checker and shape inference accepted the file
  std::map<std::string, size_t> fallback_ops;  // torch op -> nodes kept as ATen/fallthrough nodes
  std::map<std::string, size_t> core_ops;      // torch op -> nodes the core converted itself (prim::If, ...)
  // ops no schema checks -> nodes: default-domain ops ONNX does not define ("FixedPerTensorAffine"),
  // custom-domain ops without a declared schema ("com.vendor::Op")
  std::map<std::string, size_t> unchecked_ops;
  std::string graph_text;                      // readable graph (filled with options.verbose)
  std::string mode;                            // "trace" or "script": what was exported
  std::string mode_reason;                     // why (for --mode auto), and what the graph holds
  std::vector<std::string> warnings;           // e.g. branches a trace fixed
  std::vector<std::string> dynamic_checks;     // sizes the dynamic-axes check ran the graph at
  std::vector<StageReport> stages;             // in the order they ran
  std::string external_data_path;              // where the parameters went, if not into the model
  std::vector<std::string> notes;              // what the export decided on its own (external data, ...)
  std::vector<std::string> pass_results;       // what each graph pass changed, one line each
  std::vector<ExtraOutputReport> extra_outputs;  // after the model's own outputs, in the order given
};

// What an export is doing, for a progress display: the stage it entered and, while the write
// stage streams parameters, the bytes written so far of the total.
struct ExportProgress {
  std::string stage;
  size_t bytes_done = 0;
  size_t bytes_total = 0;
};
using ProgressCallback = std::function<void(const ExportProgress&)>;

}  // namespace onnxport
