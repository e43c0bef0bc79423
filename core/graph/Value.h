// Typed tree for FX node arguments (args, kwargs, output values).
#pragma once

#include "graph/DType.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jointscope {

using NodeId = uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;

enum class ValueKind : uint8_t {
    None,
    Bool,
    Int,          // int64 (torch's SymInt-free ints; int64 max included)
    Float,        // double, inf / -inf / nan included
    String,
    NodeRef,      // reference to a node of the same graph
    List,         // [a, b]
    Tuple,        // (a, b)
    Dict,         // {k: v}: items hold k0, v0, k1, v1, ...
    Slice,        // slice(start, stop, step): items hold the three parts
    DType,        // torch.float32
    Device,       // device(type='cuda', index=0) or 'cpu'
    Layout,       // torch.strided, torch.sparse_coo, ...
    MemoryFormat, // torch.contiguous_format, torch.channels_last, ...
    SymExpr,      // symbolic integer expression text: s0, 4*s0 + 1
    Ellipsis,     // ...
    Opaque,       // any other expression, kept verbatim (never evaluated)
};

class Value {
public:
    Value() = default;

    static Value none() { return Value(); }
    static Value boolean(bool b);
    static Value integer(int64_t i);
    static Value real(double f);
    static Value string(std::string s);
    static Value nodeRef(NodeId id);
    static Value list(std::vector<Value> items);
    static Value tuple(std::vector<Value> items);
    static Value dict(std::vector<std::pair<Value, Value>> entries);
    static Value slice(Value start, Value stop, Value step);
    static Value dtype(DType d);
    static Value device(std::string type, int64_t index = -1);
    static Value layout(std::string name);       // "strided" (without "torch.")
    static Value memoryFormat(std::string name); // "contiguous_format"
    static Value symExpr(std::string expr);
    static Value ellipsis();
    static Value opaque(std::string text);

    ValueKind kind() const { return kind_; }
    bool isNone() const { return kind_ == ValueKind::None; }
    bool isSequence() const { return kind_ == ValueKind::List || kind_ == ValueKind::Tuple; }

    bool asBool() const { return int_ != 0; }
    int64_t asInt() const { return int_; }
    double asFloat() const { return float_; }
    NodeId asNode() const { return static_cast<NodeId>(int_); }
    DType asDType() const { return static_cast<DType>(int_); }
    int64_t deviceIndex() const { return int_; } // -1 when absent
    // String, device type, layout, memory format, symbolic expression or opaque text.
    const std::string& text() const { return text_; }
    // List / tuple elements, dict keys and values interleaved, slice parts.
    const std::vector<Value>& items() const { return items_; }
    std::vector<Value>& items() { return items_; }

    // Calls fn(NodeId) for every node reference inside this tree.
    template <typename Fn> void forEachNode(Fn&& fn) const {
        if (kind_ == ValueKind::NodeRef)
            fn(asNode());
        for (const Value& item : items_)
            item.forEachNode(fn);
    }

    friend bool operator==(const Value& a, const Value& b);

private:
    Value(ValueKind kind, int64_t i, std::string text = {}, std::vector<Value> items = {});

    ValueKind kind_ = ValueKind::None;
    int64_t int_ = 0;
    double float_ = 0.0;
    std::string text_;
    std::vector<Value> items_;
};

bool operator==(const Value& a, const Value& b);

} // namespace jointscope
