// The write stage: the ModelProto without parameter bytes, then the initializers streamed
// from the borrowed tensors, to a temporary file renamed into place.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <unordered_set>

#include "onnx_io.h"
#include "onnxport/errors.h"

namespace onnxport::core {

namespace {
void set_value_info(onnx::ValueInfoProto& vi, const std::string& name, const TensorType& type) {
  vi.set_name(name);
  *vi.mutable_type() = to_type_proto(type);
}

onnx::TensorProto initializer_header(const Initializer& init) {
  onnx::TensorProto p;
  p.set_name(init.name);
  p.set_data_type(static_cast<int32_t>(init.tensor.dtype()));
  for (int64_t d : init.tensor.shape()) p.add_dims(d);
  return p;
}

TensorType type_of_initializer(const Initializer& init) {
  TensorType t;
  t.dtype = init.tensor.dtype();
  std::vector<Dim> dims;
  for (int64_t d : init.tensor.shape()) dims.push_back(Dim::fixed(d));
  t.shape = dims;
  return t;
}
}  // namespace

onnx::ModelProto build_model_proto(const OnnxModel& model, const ModelMeta& meta, bool with_initializer_headers) {
  onnx::ModelProto m;
  const int opset = model.opset_imports.count("") ? model.opset_imports.at("") : 17;
  m.set_ir_version(ir_version_for_opset(opset));
  m.set_producer_name(meta.producer_name);
  m.set_producer_version(meta.producer_version);
  for (const auto& [domain, version] : model.opset_imports) {
    auto* imp = m.add_opset_import();
    imp->set_domain(domain);
    imp->set_version(version);
  }
  auto* g = m.mutable_graph();
  g->set_name("main_graph");
  for (const auto& node : model.nodes) {
    auto* n = g->add_node();
    *n = node.proto;
    if (meta.provenance_doc_strings && !node.origin.torch_op.empty())
      n->set_doc_string("pack=" + node.origin.pack + " op=" + node.origin.torch_op + " module=" +
                        node.origin.module_path + (node.origin.source.empty() ? "" : " at " + node.origin.source));
  }
  for (const auto& in : model.inputs) set_value_info(*g->add_input(), in.name, in.type);
  // Before IR version 4 every initializer must also be a graph input.
  const bool params_as_inputs = !meta.export_params || meta.keep_initializers_as_inputs || m.ir_version() < 4;
  if (params_as_inputs)
    for (const auto& init : model.initializers) set_value_info(*g->add_input(), init.name, type_of_initializer(init));
  for (const auto& out : model.outputs) set_value_info(*g->add_output(), out.name, out.type);
  // Types of intermediate values (as torch.onnx writes them), for runtimes and viewers.
  std::unordered_set<std::string> io;
  for (const auto& in : model.inputs) io.insert(in.name);
  for (const auto& out : model.outputs) io.insert(out.name);
  for (const auto& node : model.nodes)
    for (const auto& name : node.proto.output()) {
      if (io.count(name)) continue;
      auto t = model.value_types.find(name);
      if (t == model.value_types.end() || !t->second.has_tensor_type() || t->second.tensor_type().elem_type() == 0)
        continue;
      auto* vi = g->add_value_info();
      vi->set_name(name);
      *vi->mutable_type() = t->second;
    }
  if (with_initializer_headers && meta.export_params)
    for (const auto& init : model.initializers) *g->add_initializer() = initializer_header(init);
  return m;
}

void write_model(const OnnxModel& model, const ModelMeta& meta, const std::string& path) {
  using google::protobuf::io::CodedOutputStream;
  using WireFormat = google::protobuf::internal::WireFormatLite;
  onnx::ModelProto m = build_model_proto(model, meta, false);
  onnx::GraphProto graph;
  graph.Swap(m.mutable_graph());
  m.clear_graph();

  // Graph field 5 (initializer) entries: header fields + raw_data (field 9) streamed from memory.
  struct Entry {
    std::string header;
    const Initializer* init;
    size_t size;  // serialized TensorProto size
  };
  std::vector<Entry> entries;
  size_t graph_size = graph.ByteSizeLong();
  if (meta.export_params) {
    for (const auto& init : model.initializers) {
      Entry e{initializer_header(init).SerializeAsString(), &init, 0};
      const size_t n = init.tensor.nbytes();
      e.size = e.header.size() + 1 + CodedOutputStream::VarintSize64(n) + n;
      graph_size += 1 + CodedOutputStream::VarintSize64(e.size) + e.size;
      entries.push_back(std::move(e));
    }
  }
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) throw ExportError("cannot write '" + tmp + "'", ErrorContext::with_hint("check the output directory exists and is writable"));
    {
      google::protobuf::io::OstreamOutputStream raw(&file);
      CodedOutputStream out(&raw);
      m.SerializeToCodedStream(&out);
      out.WriteTag(WireFormat::MakeTag(7, WireFormat::WIRETYPE_LENGTH_DELIMITED));
      out.WriteVarint64(graph_size);
      graph.SerializeToCodedStream(&out);
      for (const auto& e : entries) {
        out.WriteTag(WireFormat::MakeTag(5, WireFormat::WIRETYPE_LENGTH_DELIMITED));
        out.WriteVarint64(e.size);
        out.WriteRaw(e.header.data(), static_cast<int>(e.header.size()));
        out.WriteTag(WireFormat::MakeTag(9, WireFormat::WIRETYPE_LENGTH_DELIMITED));
        out.WriteVarint64(e.init->tensor.nbytes());
        // WriteRaw takes an int: write large tensors in chunks.
        const auto* p = static_cast<const uint8_t*>(e.init->tensor.data());
        size_t left = e.init->tensor.nbytes();
        while (left > 0) {
          const size_t chunk = std::min<size_t>(left, 1u << 30);
          out.WriteRaw(p, static_cast<int>(chunk));
          p += chunk;
          left -= chunk;
        }
      }
      if (out.HadError()) {
        std::remove(tmp.c_str());
        throw ExportError("writing '" + tmp + "' failed", ErrorContext::with_hint("is the disk full?"));
      }
    }
    file.flush();
    if (!file) {
      file.close();
      std::remove(tmp.c_str());
      throw ExportError("writing '" + tmp + "' failed", ErrorContext::with_hint("is the disk full?"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw ExportError("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

}  // namespace onnxport::core
