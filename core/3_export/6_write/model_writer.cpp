// The write stage: the ModelProto without parameter bytes, then the initializers streamed
// from the borrowed tensors, to files that appear complete or not at all (output_file.h).
#include <google/protobuf/io/coded_stream.h>
#include <unistd.h>

#include <cstdio>
#include <unordered_set>

#include "3_export/6_write/model_writer.h"
#include "1_base/output_file.h"
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
  if (!init.doc.empty()) p.set_doc_string(init.doc);
  return p;
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
  for (const auto& [key, value] : meta.properties) {
    auto* property = m.add_metadata_props();
    property->set_key(key);
    property->set_value(value);
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
  for (const auto& in : model.inputs) {
    auto* vi = g->add_input();
    vi->set_name(in.name);
    *vi->mutable_type() = type_proto_of(in);
  }
  // Before IR version 4 every initializer must also be a graph input.
  const bool params_as_inputs = !meta.export_params || meta.keep_initializers_as_inputs || m.ir_version() < 4;
  if (params_as_inputs)
    for (const auto& init : model.initializers) set_value_info(*g->add_input(), init.name, type_of_tensor(init.tensor));
  for (const auto& out : model.outputs) {
    auto* vi = g->add_output();
    vi->set_name(out.name);
    *vi->mutable_type() = type_proto_of(out);
  }
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

namespace {

// Writes tensor bytes in chunks of kWriteChunkBytes, reporting progress after each.
class PayloadWriter {
 public:
  PayloadWriter(size_t total, const WriteProgress& progress) : total_(total), progress_(progress) {}
  template <class Sink>
  void write(Sink&& sink, const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const size_t chunk = std::min(n, kWriteChunkBytes);
      sink(p, chunk);
      p += chunk;
      n -= chunk;
      done_ += chunk;
      if (progress_) progress_(done_, total_);
    }
  }

 private:
  size_t total_, done_ = 0;
  const WriteProgress& progress_;
};

size_t total_payload(const OnnxModel& model, const ModelMeta& meta) {
  size_t total = 0;
  if (meta.export_params)
    for (const auto& init : model.initializers) total += init.tensor.nbytes();
  return total;
}

// Protobuf framing written by hand around the payloads: a field's tag, and a length.
void append_tag(std::string& out, int field) {
  using WireFormat = google::protobuf::internal::WireFormatLite;
  uint8_t buf[5];
  const auto* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      WireFormat::MakeTag(field, WireFormat::WIRETYPE_LENGTH_DELIMITED), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
}

void append_varint(std::string& out, uint64_t v) {
  uint8_t buf[10];
  const auto* end = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(v, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
}

// Inline: the graph's initializer entries (field 5) are header fields + raw_data (field 9)
// streamed from the tensors, never copied into a protobuf or a buffer: the framing is built in a
// small string, and each payload goes from the tensor's memory to the file in writes of up to
// 64 MiB.
// Returns where each raw_data payload landed in the file.
ExternalDataLayout write_inline(const OnnxModel& model, const ModelMeta& meta, OutputFile& file,
                                const std::string& file_name, const WriteProgress& progress) {
  using google::protobuf::io::CodedOutputStream;
  onnx::ModelProto m = build_model_proto(model, meta, false);
  onnx::GraphProto graph;
  graph.Swap(m.mutable_graph());
  m.clear_graph();

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
  std::ostream& out = file.stream();
  size_t position = 0;
  auto put = [&](const void* data, size_t n) {
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!out) file.finish();  // throws at once, naming the file and the error (a full disk)
    position += n;
  };
  std::string frame = m.SerializeAsString();  // the model's fields; the graph (field 7) follows
  append_tag(frame, 7);
  append_varint(frame, graph_size);
  frame += graph.SerializeAsString();  // the graph without initializers; they follow as field 5s
  put(frame.data(), frame.size());
  PayloadWriter payload(total_payload(model, meta), progress);
  ExternalDataLayout where;
  where.location = file_name;
  for (const auto& e : entries) {
    frame.clear();
    append_tag(frame, 5);
    append_varint(frame, e.size);
    frame += e.header;
    append_tag(frame, 9);
    append_varint(frame, e.init->tensor.nbytes());
    put(frame.data(), frame.size());
    where.offsets.push_back(position);
    where.lengths.push_back(e.init->tensor.nbytes());
    payload.write(put, e.init->tensor.data(), e.init->tensor.nbytes());
  }
  where.total_bytes = position;
  return where;
}

}  // namespace

ExternalDataLayout layout_external_data(const OnnxModel& model, const std::string& location) {
  ExternalDataLayout layout;
  layout.location = location;
  size_t offset = 0;
  for (const auto& init : model.initializers) {
    const size_t n = init.tensor.nbytes();
    if (n < kExternalMinBytes) {
      layout.offsets.push_back(ExternalDataLayout::kInModel);
      layout.lengths.push_back(n);
      continue;
    }
    const size_t align = n >= kExternalAlignThreshold ? kExternalLargeAlignment : kExternalSmallAlignment;
    offset = (offset + align - 1) / align * align;
    layout.offsets.push_back(offset);
    layout.lengths.push_back(n);
    offset += n;
  }
  layout.total_bytes = offset;
  return layout;
}

void place_initializer_data(onnx::ModelProto& proto, const ExternalDataLayout& layout, const OnnxModel& model) {
  auto* initializers = proto.mutable_graph()->mutable_initializer();
  for (int i = 0; i < initializers->size(); ++i) {
    onnx::TensorProto& t = *initializers->Mutable(i);
    const size_t offset = layout.offsets.at(static_cast<size_t>(i));
    if (offset == ExternalDataLayout::kInModel || layout.lengths[i] < kExternalMinBytes) {
      const Tensor& data = model.initializers.at(static_cast<size_t>(i)).tensor;
      t.set_raw_data(data.data(), data.nbytes());
      continue;
    }
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    t.clear_external_data();
    auto add = [&t](const std::string& key, const std::string& value) {
      auto* entry = t.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", layout.location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(layout.lengths[i]));
  }
}

WriteResult write_model(const OnnxModel& model, const ModelMeta& meta, const std::string& path,
                        const WriteProgress& progress) {
  WriteResult result;
  result.model_path = path;
  if (meta.external_data_file.empty() || !meta.export_params) {
    OutputFile file(path);
    result.payload = write_inline(model, meta, file, file_name_of(path), progress);
    file.finish();
    OutputFile::commit_all({&file});
    return result;
  }
  // External data: every initializer's bytes go to one file beside the model, at the offsets
  // the layout gives (large tensors aligned for mmap); the model holds their locations.
  const ExternalDataLayout& layout = result.payload = layout_external_data(model, meta.external_data_file);
  result.data_path = external_data_path(path, meta.external_data_file);
  result.data_bytes = layout.total_bytes;
  if (result.data_path == path)
    throw ConfigError("the external data file '" + meta.external_data_file + "' would overwrite the model",
                      ErrorContext::with_hint("give the data file another name"));
  OutputFile data(result.data_path);
  {
    PayloadWriter payload(layout.total_bytes, progress);
    static const char zeros[kExternalLargeAlignment] = {};
    size_t position = 0;
    for (size_t i = 0; i < model.initializers.size(); ++i) {
      const Tensor& t = model.initializers[i].tensor;
      if (layout.offsets[i] == ExternalDataLayout::kInModel) continue;
      data.stream().write(zeros, static_cast<std::streamsize>(layout.offsets[i] - position));
      payload.write([&](const uint8_t* p, size_t n) { data.stream().write(reinterpret_cast<const char*>(p), n); },
                    t.data(), t.nbytes());
      position = layout.offsets[i] + t.nbytes();
    }
  }
  data.finish();
  onnx::ModelProto proto = build_model_proto(model, meta, true);
  place_initializer_data(proto, layout, model);
  OutputFile file(path);
  if (!proto.SerializeToOstream(&file.stream()))
    throw ExportError("writing the model failed", ErrorContext::with_hint("is the disk full?"));
  file.finish();
  OutputFile::commit_all({&data, &file});
  return result;
}

bool needs_external_data(const OnnxModel& model, const ModelMeta& meta) {
  // Protobuf cannot read messages of 2 GiB or more; leave room for the graph itself.
  constexpr size_t kLimit = (size_t{2} << 30) - (size_t{64} << 20);
  return meta.export_params && total_payload(model, meta) > kLimit;
}

std::string default_external_data_file(const std::string& model_path) { return file_name_of(model_path) + ".data"; }

std::string external_data_path(const std::string& model_path, const std::string& data_file) {
  return directory_of(model_path) + "/" + data_file;
}

}  // namespace onnxport::core
