// Which registered ops the runtime may call: rules over schemas, kept as data in OpPolicy.cpp.
//
// A graph file is untrusted input, and the dispatcher runs any op by name, including ones that touch the
// world outside the tensors (aten::from_file maps a file and, with shared=True, writes it back). The runtime
// calls an op only when every type in its schema is one tensor math needs and every string argument is a
// known option (never a path), and the op is not refused by name. docs/runtime.md, "Which ops run", lists the
// rules.
//
// Free of LibTorch types: Interpreter.cpp describes a c10::FunctionSchema as an OpSchemaView.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace jointscope::runtime {

struct OpSchemaView {
    struct Argument {
        std::string name;
        std::string
            type; // with Optional and List taken off, as c10 prints it: "Tensor", "int", "str", "Storage"
    };
    std::string name;     // "aten::from_file"
    std::string overload; // "" for the default overload
    std::vector<Argument> arguments;
    std::vector<std::string> returns; // types, as for arguments
};

// Why the runtime does not call this op ("reads or writes files"), or nullopt when it may.
std::optional<std::string> opRefusal(const OpSchemaView& op);

} // namespace jointscope::runtime
