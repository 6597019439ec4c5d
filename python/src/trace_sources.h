// What the trace records as each node's source: the innermost Python frame's file and line.
#pragma once

namespace onnxport::python {

// While one lives, each node the tracer records gets the innermost Python frame's file, line and
// function as its source range, instead of torch's record of the whole call stack
// (pythonRecordSourceLocation reads every frame's name into a Source of its own: 0.24 s of swin_t's
// 1.03 s trace on Debian 13). onnxport's messages and provenance read only that frame's file and
// line (source_of), which both records give alike. Frames on one line share a Source.
class InnermostFrameSources {
 public:
  InnermostFrameSources();
  ~InnermostFrameSources();
  InnermostFrameSources(const InnermostFrameSources&) = delete;
  InnermostFrameSources& operator=(const InnermostFrameSources&) = delete;
};

}  // namespace onnxport::python
