#pragma once
// The options of an export, described once. Each row ties an ExportOptions field to its config
// file key (torch.onnx.export's name where it has one), its `onnxport export` flag and help, and
// the way its values are read. The config reader, the CLI's flags, --print-config and README's
// option list all come from this table.
#include <string>
#include <vector>

#include "onnxport/options.h"

namespace onnxport {

// How an option is written on the command line.
enum class FlagForm {
  Switch,         // no value: sets one fixed value (--verbose, --no-check)
  Value,          // one value (--opset 13)
  Repeated,       // one value per occurrence (--input a --input b)
  OptionalValue,  // alone or with one value (--external-data, --external-data FILE)
};

// What the flags of a Repeated option do to the value read from the config file.
enum class FlagMerge {
  Replace,  // the flags' values replace the config's (--input, --dynamic-axes)
  Add,      // the flags' values come after the config's; for the same key a flag wins
};

struct ExportOption {
  std::string key;   // config file key; empty for a flag the CLI handles itself
  std::string flag;  // "--opset"
  FlagForm form = FlagForm::Value;
  FlagMerge merge = FlagMerge::Replace;  // for Repeated options
  std::string value_name;                // how a flag value is written ("N"); empty for a switch
  std::string config_value;              // what the config key holds ("an integer")
  std::string default_text;              // the default as a flag value; empty when there is none to show
  std::string help;                      // plain text, no trailing period
  bool torch_onnx = false;               // torch.onnx.export has this option, and `key` is its name there
};

// Every option with a config key, in the order `onnxport export --help` lists them.
const std::vector<ExportOption>& export_option_table();

// A flag from the command line with all its values in the order given (none for a switch).
struct GivenFlag {
  std::string flag;
  std::vector<std::string> values;
};

// The merge rule: defaults, then the config file (when `config_file` is not empty), then the
// flags. A flag's value wins over the config's; a Repeated option's flags merge as its FlagMerge
// says. The result is validated. Throws ConfigError naming the file and key, or the flag.
ExportOptions resolve_export_options(const std::string& config_file, const std::vector<GivenFlag>& flags);

// Reads a JSON object of option keys into `options`, as load_config_file does for a file; used
// by front ends that take options as named arguments (the Python package). Messages start with
// `origin` and call the keys arguments: "onnxport.export(): argument 'opset_version' ...".
void apply_options_json(const std::string& json_object, const std::string& origin, ExportOptions& options);

// The options as a config file: a JSON object with every key of the table, which
// load_config_file reads back to the same options.
std::string export_options_json(const ExportOptions& options);

}  // namespace onnxport
