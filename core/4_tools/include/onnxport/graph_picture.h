#pragma once
// A picture of an ONNX file's graph (onnxport inspect --dot / --html): nodes grouped into
// nested clusters by the module they came from, edges labelled with their value's type, the
// initializers a node reads listed on the node instead of drawn.
#include <string>

namespace onnxport {

// The graph as Graphviz DOT text. Throws the errors of reading the file (ModelError,
// ConfigError) when it is not a readable ONNX model.
std::string graph_dot(const std::string& onnx_path);

// Writes one self-contained HTML page (no external resources) with the graph drawn as SVG by
// Graphviz's `dot`, which must be on PATH, node tooltips with attributes and provenance, and a
// header with the file's opset, node count, inputs and outputs. The page appears complete or
// not at all. Throws ExportError when dot is missing or fails, ConfigError for an HTML path
// that cannot be written.
void write_graph_html(const std::string& onnx_path, const std::string& html_path);

}  // namespace onnxport
