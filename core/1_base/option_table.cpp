// The export option table: one row per ExportOptions field, with its config key, flag, help and
// the readers and writer of its values. Everything else about options goes through these rows.
#include "onnxport/option_table.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <fstream>
#include <functional>
#include <limits>
#include <algorithm>
#include <set>
#include <stdexcept>
#include <sstream>
#include <type_traits>

#include "1_base/input_file.h"
#include "onnxport/errors.h"

namespace onnxport {

namespace {

using Json = nlohmann::ordered_json;  // ordered, so that --print-config follows the table

// A config value of the wrong JSON type; load_config_file adds the file and key.
struct WrongJsonType {
  std::string got;       // the value found, as JSON
  std::string expected;  // what the key holds ("a list of strings")
};

// One row of the table: the public description and how the field's values are read and written.
struct OptionRow {
  ExportOption doc;
  std::function<void(const std::string& text, ExportOptions&)> add_text;  // one flag value
  std::function<void(const Json&, ExportOptions&)> read_json;
  std::function<Json(const ExportOptions&)> write_json;
  std::function<void(ExportOptions&)> reset;  // back to the default
};

ConfigError config_error(const std::string& message, const std::string& hint) {
  return ConfigError(message, ErrorContext::with_hint(hint));
}

// ------------------------------------------------------------------ reading values

std::string json_text(const Json& j) {
  std::string text = j.dump();
  return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

[[noreturn]] void wrong_type(const Json& j, const std::string& expected) {
  throw WrongJsonType{json_text(j), expected};
}

template <class T>
T integer_from_text(const std::string& flag, const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  const std::string expected = std::is_signed_v<T> ? "a whole number" : "a whole number >= 0";
  if (ec == std::errc::result_out_of_range)
    throw config_error(flag + " '" + text + "': the number is out of range", "give a smaller number");
  if (ec != std::errc() || stop != end || text.empty())
    throw config_error(flag + " '" + text + "': expected " + expected, "write it in decimal digits, e.g. 13");
  return value;
}

// JSON keeps non-negative integers as unsigned and negative ones as signed.
template <class T>
T integer_from_json(const Json& j, const std::string& expected) {
  if (j.is_number_unsigned() && j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max()))
    return static_cast<T>(j.get<uint64_t>());
  if constexpr (std::is_signed_v<T>) {
    if (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() >= std::numeric_limits<T>::min())
      return static_cast<T>(j.get<int64_t>());
  }
  wrong_type(j, expected);
}

std::string string_from_json(const Json& j, const std::string& expected) {
  if (!j.is_string()) wrong_type(j, expected);
  return j.get<std::string>();
}

std::vector<std::string> strings_from_json(const Json& j, const std::string& expected) {
  if (!j.is_array()) wrong_type(j, expected);
  std::vector<std::string> out;
  for (const auto& item : j) out.push_back(string_from_json(item, expected));
  return out;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

// torch.onnx names the axes of a list given without names "<value>_dynamic_axes_<k>" by their
// position k = 1, 2, ... in the list: {"images": [1, 2]} names axis 2 "images_dynamic_axes_2".
// An unnamed axis of --dynamic-axes is named after the axis: "x:1=seq,2" names axis 2 "x_dynamic_axes_3".
std::string generated_axis_name(const std::string& value, size_t k) {
  return value + "_dynamic_axes_" + std::to_string(k);
}

using DynamicAxes = std::map<std::string, std::map<int64_t, std::string>>;

// "NAME:0=batch,1=seq"; an axis without "=DIM" gets torch.onnx's generated name.
void add_dynamic_axes(const std::string& text, DynamicAxes& axes) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    throw config_error("--dynamic-axes '" + text + "': expected NAME:AXIS=DIM_NAME[,AXIS=DIM_NAME]",
                       "e.g. --dynamic-axes input0:0=batch");
  const std::string name = text.substr(0, colon);
  const auto items = split_commas(text.substr(colon + 1));
  if (items.empty() || std::any_of(items.begin(), items.end(), [](const std::string& i) { return i.empty(); }))
    throw config_error("--dynamic-axes '" + text + "': expected NAME:AXIS=DIM_NAME[,AXIS=DIM_NAME]",
                       "e.g. --dynamic-axes input0:0=batch");
  for (const auto& item : items) {
    const auto eq = item.find('=');
    const std::string axis_text = item.substr(0, eq);
    int64_t axis = 0;
    try {
      axis = integer_from_text<int64_t>("--dynamic-axes", axis_text);
    } catch (const ConfigError&) {
      throw config_error("--dynamic-axes '" + text + "': bad axis '" + item + "'",
                         "write each axis as AXIS=DIM_NAME, e.g. 0=batch");
    }
    if (axes[name].count(axis))
      throw config_error(
          "--dynamic-axes '" + text + "': axis " + std::to_string(axis) + " of '" + name + "' is given twice",
          "name each axis once");
    axes[name][axis] = eq == std::string::npos ? generated_axis_name(name, axis + 1) : item.substr(eq + 1);
  }
}

// {"x": {"0": "batch"}} or, as in torch.onnx, {"x": [0, 1]} with generated names.
DynamicAxes dynamic_axes_from_json(const Json& j, const std::string& expected) {
  if (!j.is_object()) wrong_type(j, expected);
  DynamicAxes out;
  for (const auto& [name, axes] : j.items()) {
    auto& named = out[name];
    if (axes.is_array()) {
      for (size_t position = 0; position < axes.size(); ++position) {
        const auto a = integer_from_json<int64_t>(axes[position], expected);
        if (named.count(a))
          throw config_error("dynamic_axes: axis " + std::to_string(a) + " of '" + name + "' is given twice",
                             "name each axis once");
        named[a] = generated_axis_name(name, position + 1);
      }
    } else if (axes.is_object()) {
      for (const auto& [axis, dim] : axes.items()) {
        int64_t a = 0;
        try {
          a = integer_from_text<int64_t>("axis", axis);
        } catch (const ConfigError&) {
          wrong_type(Json(axis), expected + " (axes are numbers)");
        }
        named[a] = string_from_json(dim, expected);
      }
    } else {
      wrong_type(axes, expected);
    }
  }
  return out;
}

Json dynamic_axes_to_json(const DynamicAxes& axes) {
  Json out = Json::object();
  for (const auto& [name, named] : axes) {
    Json dims = Json::object();
    for (const auto& [axis, dim] : named) dims[std::to_string(axis)] = dim;
    out[name] = dims;
  }
  return out;
}

// "com.example=2"
void add_custom_opset(const std::string& text, std::map<std::string, int>& opsets) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw config_error("--custom-opset '" + text + "': expected DOMAIN=VERSION", "e.g. --custom-opset com.example=2");
  try {
    opsets[text.substr(0, eq)] = integer_from_text<int>("--custom-opset", text.substr(eq + 1));
  } catch (const ConfigError&) {
    throw config_error("--custom-opset '" + text + "': bad version '" + text.substr(eq + 1) + "'",
                       "write the version as a whole number, e.g. --custom-opset com.example=2");
  }
}

std::map<std::string, int> custom_opsets_from_json(const Json& j, const std::string& expected) {
  if (!j.is_object()) wrong_type(j, expected);
  std::map<std::string, int> out;
  for (const auto& [domain, version] : j.items()) out[domain] = integer_from_json<int>(version, expected);
  return out;
}

// ------------------------------------------------------------------ building rows

// A row for `field`: `add_text` reads one flag value into it, `from_json` a config value.
template <class T>
OptionRow field_row(ExportOption doc, T ExportOptions::*field, std::function<void(const std::string&, T&)> add_text,
                    std::function<T(const Json&, const std::string& expected)> from_json,
                    std::function<Json(const T&)> to_json) {
  OptionRow row;
  const std::string expected = doc.config_value;
  row.add_text = [field, add_text](const std::string& text, ExportOptions& o) { add_text(text, o.*field); };
  row.read_json = [field, from_json, expected](const Json& j, ExportOptions& o) { o.*field = from_json(j, expected); };
  row.write_json = [field, to_json](const ExportOptions& o) { return to_json(o.*field); };
  row.reset = [field](ExportOptions& o) { o.*field = ExportOptions{}.*field; };
  row.doc = std::move(doc);
  return row;
}

// A boolean whose flag sets it to `when_given` (--verbose sets true, --no-check sets false).
OptionRow switch_row(const char* key, const char* flag, bool ExportOptions::*field, bool when_given, const char* help) {
  ExportOption doc{key, flag, FlagForm::Switch, FlagMerge::Replace, "", "true or false", "", help};
  return field_row<bool>(
      doc, field, [when_given](const std::string&, bool& v) { v = when_given; },
      [](const Json& j, const std::string& expected) {
        if (!j.is_boolean()) wrong_type(j, expected);
        return j.get<bool>();
      },
      [](const bool& v) { return Json(v); });
}

template <class T>
OptionRow integer_row(const char* key, const char* flag, T ExportOptions::*field, const char* value_name,
                      const char* config_value, const std::string& help) {
  ExportOption doc{
      key, flag, FlagForm::Value, FlagMerge::Replace, value_name, config_value, std::to_string(ExportOptions{}.*field),
      help};
  const std::string flag_name = flag;
  return field_row<T>(
      doc, field, [flag_name](const std::string& text, T& v) { v = integer_from_text<T>(flag_name, text); },
      integer_from_json<T>, [](const T& v) { return Json(v); });
}

// An enum written as one of its names, the same text in a flag and in the config file.
template <class E>
OptionRow enum_row(const char* key, const char* flag, E ExportOptions::*field, const char* value_name,
                   E (*parse)(const std::string&), const char* (*name)(E), const std::string& help) {
  ExportOption doc{key,
                   flag,
                   FlagForm::Value,
                   FlagMerge::Replace,
                   value_name,
                   std::string("a string: ") + value_name,
                   name(ExportOptions{}.*field),
                   help};
  return field_row<E>(
      doc, field, [parse](const std::string& text, E& v) { v = parse(text); },
      [parse](const Json& j, const std::string& expected) { return parse(string_from_json(j, expected)); },
      [name](const E& v) { return Json(name(v)); });
}

// A comma-separated flag value, a list of strings in the config file.
OptionRow name_list_row(const char* key, const char* flag, std::vector<std::string> ExportOptions::*field,
                        const char* help) {
  ExportOption doc{key, flag, FlagForm::Value, FlagMerge::Replace, "NAME[,NAME]", "a list of strings", "", help};
  return field_row<std::vector<std::string>>(
      doc, field, [](const std::string& text, std::vector<std::string>& v) { v = split_commas(text); },
      strings_from_json, [](const std::vector<std::string>& v) { return Json(v); });
}

// One string, the same text in a flag and in the config file.
OptionRow string_row(const char* key, const char* flag, std::string ExportOptions::*field, const char* value_name,
                     const char* help) {
  ExportOption doc{key, flag, FlagForm::Value, FlagMerge::Replace, value_name, "a string", ExportOptions{}.*field, help};
  return field_row<std::string>(
      doc, field, [](const std::string& text, std::string& v) { v = text; },
      [](const Json& j, const std::string& expected) { return string_from_json(j, expected); },
      [](const std::string& v) { return Json(v); });
}

// A flag given once per string, a list of strings in the config file.
OptionRow repeated_string_row(const char* key, const char* flag, FlagMerge merge, const char* value_name,
                              std::vector<std::string> ExportOptions::*field, const char* help) {
  ExportOption doc{key, flag, FlagForm::Repeated, merge, value_name, "a list of strings", "", help};
  return field_row<std::vector<std::string>>(
      doc, field, [](const std::string& text, std::vector<std::string>& v) { v.push_back(text); },
      strings_from_json, [](const std::vector<std::string>& v) { return Json(v); });
}

// --external-data [FILE]; in a config file true, false or the file name.
OptionRow external_data_row() {
  OptionRow row;
  row.doc = {"external_data",
             "--external-data",
             FlagForm::OptionalValue,
             FlagMerge::Replace,
             "FILE",
             "true, false or a file name",
             "",
             "write every initializer to one file beside the model (ONNX external data, large tensors at 64 KiB "
             "offsets for mmap): FILE, or MODEL.onnx.data without one. Models whose parameters pass protobuf's "
             "2 GiB limit use MODEL.onnx.data on their own"};
  row.add_text = [](const std::string& text, ExportOptions& o) {
    if (text.find('/') != std::string::npos)
      throw config_error("--external-data '" + text + "': the data file is a name in the model's directory",
                         "give a file name without a directory, e.g. --external-data weights.bin");
    o.external_data = true;
    o.external_data_file = text;
  };
  row.read_json = [add = row.add_text](const Json& j, ExportOptions& o) {
    if (j.is_boolean()) {
      o.external_data = j.get<bool>();
      o.external_data_file.clear();
      return;
    }
    add(string_from_json(j, "true, false or a file name"), o);
  };
  row.write_json = [](const ExportOptions& o) {
    return !o.external_data ? Json(false) : o.external_data_file.empty() ? Json(true) : Json(o.external_data_file);
  };
  row.reset = [](ExportOptions& o) {
    o.external_data = false;
    o.external_data_file.clear();
  };
  return row;
}

// Marks a row whose key is a torch.onnx.export parameter.
OptionRow torch_onnx(OptionRow row) {
  row.doc.torch_onnx = true;
  return row;
}

std::vector<OptionRow> make_rows() {
  using O = ExportOptions;
  std::vector<OptionRow> rows;
  rows.push_back(field_row<std::vector<InputSpec>>(
      {"inputs", "--input", FlagForm::Repeated, FlagMerge::Replace, "NAME:SHAPE[:DTYPE]|NAME=FILE.npy|NAME:TYPE=VALUE",
       "a list of strings, as --input takes them", "",
       "example argument, one per argument of the exported method, in order: NAME:1x3x224x224:float32 draws a "
       "random tensor (fixed seed), NAME=FILE.npy reads one; NAME:int=16000, NAME:float=0.5, NAME:bool=1, "
       "NAME:str=TEXT, NAME:int[]=3,4 give numbers, strings and their lists, NAME:none None, NAME:(A,B) a tuple, "
       "NAME:[A,B] a list, NAME:{KEY:A} a dict of such elements (A: 2x3[:DTYPE], FILE.npy, int=4, none, ...). "
       "A tensor's NAME names its graph input"},
      &O::inputs, [](const std::string& text, std::vector<InputSpec>& v) { v.push_back(InputSpec::parse(text)); },
      [](const Json& j, const std::string& expected) {
        std::vector<InputSpec> specs;
        for (const auto& text : strings_from_json(j, expected)) specs.push_back(InputSpec::parse(text));
        return specs;
      },
      [](const std::vector<InputSpec>& specs) {
        Json out = Json::array();
        for (const auto& s : specs) out.push_back(s.text());
        return out;
      }));
  rows.push_back(
      torch_onnx(integer_row<int>("opset_version", "--opset", &O::opset_version, "N", "an integer",
                                  "target opset, " + std::to_string(kMinOpset) + " to " + std::to_string(kMaxMappedOpset) +
                                      " (to 17 on a build linking ONNX 1.12, as Debian 12's)")));
  rows.push_back(
      torch_onnx(name_list_row("input_names", "--input-names", &O::input_names, "graph input names, comma-separated")));
  rows.push_back(torch_onnx(
      name_list_row("output_names", "--output-names", &O::output_names, "graph output names, comma-separated; outputs not named here are output_<i>, "
                        "but the values of a dict the model returns take its keys (a list value's items: "
                        "key.0, key.1, ...)")));
  rows.push_back(torch_onnx(field_row<DynamicAxes>(
      {"dynamic_axes", "--dynamic-axes", FlagForm::Repeated, FlagMerge::Replace, "NAME:AXIS=DIM[,AXIS=DIM]",
       R"(an object {"NAME": {"AXIS": "DIM"}} or {"NAME": [AXIS, ...]})", "",
       "marks axes of an input/output dynamic: they become dim_param DIM, every size computed from them stays a "
       "Shape/Gather computation, and the model is re-run at other sizes to prove it (e.g. --dynamic-axes "
       "x:0=batch,1=seq)"},
      &O::dynamic_axes, add_dynamic_axes, dynamic_axes_from_json, dynamic_axes_to_json)));
  rows.push_back(repeated_string_row(
      "extra_outputs", "--extra-outputs", FlagMerge::Replace, "SPEC", &O::extra_outputs,
      "make an intermediate value a graph output, after the model's own: a module path (layer3.1: what the module "
      "returns, as output 'layer3.1'), a TorchScript value name, or an ONNX value name as --verbose prints it; "
      "typed like any output"));
  rows.push_back(repeated_string_row("plugin_dirs", "--plugin-dir", FlagMerge::Add, "DIR", &O::plugin_dirs,
                                     "extra directory of op packs"));
  rows.push_back(torch_onnx(field_row<std::map<std::string, int>>(
      {"custom_opsets", "--custom-opset", FlagForm::Repeated, FlagMerge::Add, "DOMAIN=VERSION",
       R"(an object {"DOMAIN": VERSION})", "", "opset version of a custom domain, instead of the op pack's"},
      &O::custom_opsets, add_custom_opset, custom_opsets_from_json,
      [](const std::map<std::string, int>& v) { return Json(v); })));
  rows.push_back(torch_onnx(switch_row("do_constant_folding", "--no-constant-folding", &O::do_constant_folding, false,
                                       "keep every computation on constants in the graph instead of folding it")));
  rows.push_back(integer_row<int>("optimize", "--optimize", &O::optimize, "0|1|2", "an integer",
                                  "graph passes after conversion: 0 runs what torch.onnx runs (dead code, constant "
                                  "folding, Conv+BN fusion); 1 (default) also removes no-ops (Identity, Cast to the "
                                  "same type...), merges Transposes (also across ops on the last axis), "
                                  "Concats of Concats along one axis and Reshape-Transpose-Reshape chains, gives "
                                  "run-time Reshape targets known from the types as constants, merges repeated nodes "
                                  "and deduplicates equal initializers "
                                  "(tied weights; not in training mode), all exact; 2 also moves a constant Add "
                                  "into the bias of the Conv, Gemm or 2-d MatMul before it (the sum may round differently in the last bit); "
                                  "--verbose lists what each pass removed"));
  rows.push_back(torch_onnx(switch_row("export_params", "--no-export-params", &O::export_params, false,
                                       "parameters become graph inputs without values")));
  rows.push_back(
      torch_onnx(switch_row("keep_initializers_as_inputs", "--keep-initializers-as-inputs",
                            &O::keep_initializers_as_inputs, true, "list initializers as graph inputs too")));
  rows.push_back(torch_onnx(
      enum_row("training", "--training", &O::training, "eval|preserve|train", parse_training_mode, training_mode_name,
               "eval exports in inference mode (BatchNorm folded into Conv), train in training mode, "
               "preserve in the mode the model was saved in")));
  rows.push_back(string_row("method", "--method", &O::method, "NAME",
                            "the method of the module to export (encode, infer, ...): onnxport inspect MODEL.pt lists "
                            "them"));
  rows.push_back(string_row("submodule", "--submodule", &O::submodule, "PATH",
                            "export this submodule of the loaded file instead of the whole model (_model, "
                            "encoder.layers.0): onnxport inspect MODEL.pt lists them"));
  rows.push_back(switch_row("dynamic_numbers", "--dynamic-numbers", &O::dynamic_numbers, true,
                            "number arguments (int, float, bool) become 0-d graph inputs (int64, float64, bool) "
                            "instead of constants folded into the graph, so one file serves every value; branches on "
                            "them stay in the graph (script mode). The Python package's default for a scripted "
                            "module, as torch.onnx"));
  rows.push_back(switch_row("state_io", "--state-io", &O::state_io, true,
                            "each module tensor the exported method assigns (a streaming model's state) becomes a "
                            "graph input named after the attribute (its value in the file the example) and its "
                            "value after the call a graph output NAME_out, with dynamic dims where calls change its "
                            "size; without it the export computes one call from the file's state and warns"));
  rows.push_back(enum_row("mode", "--mode", &O::mode, "trace|script|auto", parse_export_mode, export_mode_name,
                          "trace: record the ops one run on the example inputs executes (loops unrolled, branches "
                          "fixed; a torch.jit.trace .pt is used as saved). script: keep TorchScript control flow "
                          "as ONNX If/Loop. auto: script when a branch or loop, or a number taken from a tensor "
                          "(int(t), t.item()), depends on tensor values (or, with dynamic axes, a branch or loop on "
                          "their sizes, or a size read as a number in a graph with control flow), trace otherwise; "
                          "--verbose says which and why"));
  rows.push_back(enum_row("default_dtype", "--default-dtype", &O::default_dtype, "float32|float64", parse_default_dtype,
                          default_dtype_name,
                          "torch.get_default_dtype() while the model is loaded, run and converted: what an integer "
                          "true division and a factory given no dtype make. A .pt does not record the default of "
                          "the process that saved it (the Python package passes its process's)"));
  rows.push_back(switch_row("check_dynamic_axes", "--no-dynamic-check", &O::check_dynamic_axes, false,
                            "with dynamic axes, skip re-running the model at other sizes to prove no size was "
                            "baked in"));
  rows.push_back(switch_row("warn_unproven_dynamic_axes", "--warn-unproven-dynamic-axes",
                            &O::warn_unproven_dynamic_axes, true,
                            "when the model cannot run with the dynamic axes grown (its data forbids other sizes, "
                            "or a size was baked in), write the file with a warning instead of failing (the Python "
                            "package's default)"));
  rows.push_back(switch_row("drop_unused_inputs", "--drop-unused-inputs", &O::drop_unused_inputs, true,
                            "drop graph inputs the exported graph never reads, as torch.onnx does (the Python "
                            "package's default)"));
  rows.push_back(switch_row("ignore_unknown_dynamic_axes", "--ignore-unknown-dynamic-axes",
                            &O::ignore_unknown_dynamic_axes, true,
                            "warn about --dynamic-axes names that are no graph input or output, and axes beyond "
                            "a value's rank, and ignore them, as torch.onnx does (the Python package's default), "
                            "instead of failing"));
  rows.push_back(torch_onnx(enum_row(
      "operator_export_type", "--operator-export-type", &O::operator_export_type,
      "onnx|onnx_aten_fallback|onnx_aten|onnx_fallthrough", parse_operator_export_type, operator_export_type_name,
      "onnx fails on unmapped ops; onnx_aten_fallback makes each unmapped op an ATen node; "
      "onnx_aten makes every aten op an ATen node; onnx_fallthrough keeps unmapped ops in "
      "their namespace's domain")));
  rows.push_back(
      torch_onnx(switch_row("verbose", "--verbose", &O::verbose, true,
                            "print the chosen mode, the exported graph with types and provenance, op counts and "
                            "timings")));
  rows.push_back(switch_row("provenance", "--provenance", &O::provenance, true,
                            "write each node's op pack, torch op and module path in its doc_string"));
  rows.push_back(switch_row("check", "--no-check", &O::check, false,
                            "skip the ONNX checker and shape inference on the written file"));
  rows.push_back(switch_row("strict", "--no-strict", &O::strict, false,
                            "don't validate each node against its ONNX schema while converting"));
  rows.push_back(
      integer_row<uint64_t>("seed", "--seed", &O::seed, "N", "an unsigned integer", "seed for random example inputs"));
  rows.push_back(integer_row<int>(
      "threads", "--threads", &O::threads, "N", "an integer",
      "libtorch's intra-op threads while the export runs the model; 0 keeps libtorch's own setting (one per core "
      "on Debian 13, whose OpenBLAS starts as many again: on 2 cores vit_b_16's forward took 1.36 s with 2 against "
      "0.35 s with 1)"));
  rows.push_back(external_data_row());
  return rows;
}

const std::vector<OptionRow>& rows() {
  static const std::vector<OptionRow> table = make_rows();
  return table;
}

const OptionRow* row_for_key(const std::string& key) {
  for (const auto& row : rows())
    if (row.doc.key == key) return &row;
  return nullptr;
}

const OptionRow& row_for_flag(const std::string& flag) {
  for (const auto& row : rows())
    if (row.doc.flag == flag) return row;
  throw config_error("'" + flag + "' is not an export option", "see `onnxport export --help` for the flags");
}

// "did you mean 'opset_version'?" for a key that a table key contains, or that contains one.
std::string key_hint(const std::string& key) {
  const std::string listing = "`onnxport export --help` shows each flag's config key";
  for (const auto& row : rows())
    if (key.size() >= 3 && (row.doc.key.find(key) != std::string::npos || key.find(row.doc.key) != std::string::npos))
      return "did you mean '" + row.doc.key + "'? " + listing;
  return listing;
}

// Option values nest a few levels ({"dynamic_axes": {"x": {"0": "batch"}}}); far deeper text is
// refused while it is parsed, before anything walks it recursively (200,000 levels overflowed the stack).
constexpr int kMaxJsonDepth = 64;

// Parses `source` (a stream or a string) as JSON that nests at most kMaxJsonDepth levels and
// repeats no key within an object (nlohmann would keep the last of two silently: a config
// saying two things is refused). `origin` starts every message.
template <typename Source>
Json parse_bounded_json(Source&& source, const std::string& origin, const std::string& syntax_hint) {
  std::vector<std::set<std::string>> keys;  // per open object
  std::string repeated;
  bool too_deep = false;
  auto watch = [&](int depth, Json::parse_event_t event, Json& parsed) {
    const bool opens = event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) {
      too_deep = true;
      throw std::length_error("nesting");
    }
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == Json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
        repeated.empty())
      repeated = parsed.get<std::string>();
    return true;
  };
  Json j;
  try {
    j = Json::parse(std::forward<Source>(source), watch);
  } catch (const Json::exception& e) {
    throw config_error(origin + " is not valid JSON: " + e.what(), syntax_hint);
  } catch (const std::length_error&) {
    if (!too_deep) throw;
    throw config_error(origin + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                       "options nest at most 3 levels; is this the right file?");
  }
  if (!repeated.empty()) throw config_error(origin + ": key '" + repeated + "' appears twice", "keep one of them");
  return j;
}

Json read_json_object(const std::string& path) {
  core::require_regular_file(path, "the config file", "give --config the path of a JSON file");
  std::ifstream in(path);
  if (!in) throw config_error("cannot open config file '" + path + "'", "check the path given to --config");
  Json j = parse_bounded_json(in, "config file '" + path + "'", "fix the JSON syntax");
  if (!j.is_object())
    throw config_error("config file '" + path + "' must hold a JSON object", R"(e.g. {"opset_version": 13})");
  return j;
}

}  // namespace

const std::vector<ExportOption>& export_option_table() {
  static const std::vector<ExportOption> docs = [] {
    std::vector<ExportOption> out;
    for (const auto& row : rows()) out.push_back(row.doc);
    return out;
  }();
  return docs;
}

namespace {

// Reads each key of a config object into `o`; `origin` starts every message ("config file 'x.json'").
void apply_config(const Json& config, const std::string& origin, const std::string& noun, ExportOptions& o) {
  for (const auto& [key, value] : config.items()) {
    const OptionRow* row = row_for_key(key);
    if (!row) throw config_error(origin + ": unknown " + noun + " '" + key + "'", key_hint(key));
    const std::string where = origin + ": " + noun + " '" + key + "'";
    try {
      row->read_json(value, o);
    } catch (const WrongJsonType& e) {
      throw config_error(where + " has the wrong type: got " + e.got, "write " + e.expected);
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": " + e.message(), e.context());
    }
  }
}

}  // namespace

void load_config_file(const std::string& path, ExportOptions& o) {
  apply_config(read_json_object(path), "config file '" + path + "'", "key", o);
}

void apply_options_json(const std::string& json_object, const std::string& origin, ExportOptions& o) {
  const Json config = parse_bounded_json(json_object, origin + ": the options", "pass a JSON object");
  if (!config.is_object()) throw config_error(origin + ": the options are not a JSON object", "pass a JSON object");
  apply_config(config, origin, "argument", o);
}

ExportOptions resolve_export_options(const std::string& config_file, const std::vector<GivenFlag>& flags) {
  ExportOptions o;
  if (!config_file.empty()) load_config_file(config_file, o);
  std::set<const OptionRow*> replaced;
  for (const auto& given : flags) {
    const OptionRow& row = row_for_flag(given.flag);
    const bool first = replaced.insert(&row).second;
    if (row.doc.form == FlagForm::Repeated && row.doc.merge == FlagMerge::Replace && first) row.reset(o);
    if (row.doc.form == FlagForm::Switch || (row.doc.form == FlagForm::OptionalValue && given.values.empty()))
      row.add_text("", o);
    for (const auto& value : given.values) row.add_text(value, o);
  }
  o.validate();
  return o;
}

std::string export_options_json(const ExportOptions& options) {
  Json out = Json::object();
  for (const auto& row : rows()) out[row.doc.key] = row.write_json(options);
  return out.dump(2);
}

}  // namespace onnxport
