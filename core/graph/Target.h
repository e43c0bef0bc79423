// What a node calls, parsed from its printed form.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope {

enum class TargetKind : uint8_t {
    Name,        // placeholder / get_attr / call_method / call_module / output: a plain name or path
    OpOverload,  // torch.ops.aten.mm.default
    OpPacket,    // torch.ops.aten.mm (no overload)
    HigherOrder, // torch.ops.higher_order.invoke_subgraph
    Operator,    // operator.getitem, operator.add
    Python,      // torch.sin, getattr, torch.nn.functional.relu, mangled globals
};

struct Target {
    TargetKind kind = TargetKind::Name;
    std::string text;     // canonical printed form: "torch.ops.aten.mm.default", "operator.getitem", "sin"
    std::string ns;       // "aten", "higher_order", "_c10d_functional", "operator", "torch"
    std::string op;       // "mm", "getitem"
    std::string overload; // "default", "Tensor", "" for packets

    // Parses a call_function target as FX prints it ("torch.ops.aten.mm.default") or as
    // str(node.target) gives it ("aten.mm.default").
    static Target parseFunction(std::string_view text);
    static Target name(std::string_view text);

    // Schema name for the dispatcher: "aten::mm" (overload kept apart).
    std::string schemaName() const { return ns + "::" + op; }
    bool isOp(std::string_view nsName, std::string_view opName) const { return ns == nsName && op == opName; }
    bool isGetItem() const { return kind == TargetKind::Operator && op == "getitem"; }

    friend bool operator==(const Target&, const Target&) = default;
};

} // namespace jointscope
