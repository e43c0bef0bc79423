#include "graph/Value.h"

#include <cmath>

namespace jointscope {

Value::Value(ValueKind kind, int64_t i, std::string text, std::vector<Value> items)
    : kind_(kind), int_(i), text_(std::move(text)), items_(std::move(items)) {}

Value Value::boolean(bool b) {
    return Value(ValueKind::Bool, b ? 1 : 0);
}

Value Value::integer(int64_t i) {
    return Value(ValueKind::Int, i);
}

Value Value::real(double f) {
    Value v(ValueKind::Float, 0);
    v.float_ = f;
    return v;
}

Value Value::string(std::string s) {
    return Value(ValueKind::String, 0, std::move(s));
}

Value Value::nodeRef(NodeId id) {
    return Value(ValueKind::NodeRef, id);
}

Value Value::list(std::vector<Value> items) {
    return Value(ValueKind::List, 0, {}, std::move(items));
}

Value Value::tuple(std::vector<Value> items) {
    return Value(ValueKind::Tuple, 0, {}, std::move(items));
}

Value Value::dict(std::vector<std::pair<Value, Value>> entries) {
    Value v(ValueKind::Dict, 0);
    v.items_.reserve(entries.size() * 2);
    for (auto& [key, value] : entries) {
        v.items_.push_back(std::move(key));
        v.items_.push_back(std::move(value));
    }
    return v;
}

Value Value::slice(Value start, Value stop, Value step) {
    return Value(ValueKind::Slice, 0, {}, {std::move(start), std::move(stop), std::move(step)});
}

Value Value::dtype(DType d) {
    return Value(ValueKind::DType, static_cast<int64_t>(d));
}

Value Value::device(std::string type, int64_t index) {
    return Value(ValueKind::Device, index, std::move(type));
}

Value Value::layout(std::string name) {
    return Value(ValueKind::Layout, 0, std::move(name));
}

Value Value::memoryFormat(std::string name) {
    return Value(ValueKind::MemoryFormat, 0, std::move(name));
}

Value Value::symExpr(std::string expr) {
    return Value(ValueKind::SymExpr, 0, std::move(expr));
}

Value Value::ellipsis() {
    return Value(ValueKind::Ellipsis, 0);
}

Value Value::opaque(std::string text) {
    return Value(ValueKind::Opaque, 0, std::move(text));
}

bool operator==(const Value& a, const Value& b) {
    if (a.kind_ != b.kind_ || a.int_ != b.int_ || a.text_ != b.text_ || a.items_ != b.items_)
        return false;
    if (a.kind_ != ValueKind::Float)
        return true;
    // nan == nan here: equality means "the same literal", for round-trip tests.
    if (std::isnan(a.float_) && std::isnan(b.float_))
        return true;
    return a.float_ == b.float_;
}

} // namespace jointscope
