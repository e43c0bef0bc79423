#include "graph/Value.h"

#include <cmath>

namespace jointscope {

Value Value::boolean(bool b) {
    Value v;
    v.kind_ = ValueKind::Bool;
    v.int_ = b ? 1 : 0;
    return v;
}

Value Value::integer(int64_t i) {
    Value v;
    v.kind_ = ValueKind::Int;
    v.int_ = i;
    return v;
}

Value Value::real(double f) {
    Value v;
    v.kind_ = ValueKind::Float;
    v.float_ = f;
    return v;
}

Value Value::string(std::string s) {
    Value v;
    v.kind_ = ValueKind::String;
    v.text_ = std::move(s);
    return v;
}

Value Value::nodeRef(NodeId id) {
    Value v;
    v.kind_ = ValueKind::NodeRef;
    v.int_ = id;
    return v;
}

Value Value::list(std::vector<Value> items) {
    Value v;
    v.kind_ = ValueKind::List;
    v.items_ = std::move(items);
    return v;
}

Value Value::tuple(std::vector<Value> items) {
    Value v;
    v.kind_ = ValueKind::Tuple;
    v.items_ = std::move(items);
    return v;
}

Value Value::dict(std::vector<std::pair<Value, Value>> entries) {
    Value v;
    v.kind_ = ValueKind::Dict;
    v.items_.reserve(entries.size() * 2);
    for (auto& [key, value] : entries) {
        v.items_.push_back(std::move(key));
        v.items_.push_back(std::move(value));
    }
    return v;
}

Value Value::slice(Value start, Value stop, Value step) {
    Value v;
    v.kind_ = ValueKind::Slice;
    v.items_ = {std::move(start), std::move(stop), std::move(step)};
    return v;
}

Value Value::dtype(DType d) {
    Value v;
    v.kind_ = ValueKind::DType;
    v.int_ = static_cast<int64_t>(d);
    return v;
}

Value Value::device(std::string type, int64_t index) {
    Value v;
    v.kind_ = ValueKind::Device;
    v.text_ = std::move(type);
    v.int_ = index;
    return v;
}

Value Value::layout(std::string name) {
    Value v;
    v.kind_ = ValueKind::Layout;
    v.text_ = std::move(name);
    return v;
}

Value Value::memoryFormat(std::string name) {
    Value v;
    v.kind_ = ValueKind::MemoryFormat;
    v.text_ = std::move(name);
    return v;
}

Value Value::symExpr(std::string expr) {
    Value v;
    v.kind_ = ValueKind::SymExpr;
    v.text_ = std::move(expr);
    return v;
}

Value Value::ellipsis() {
    Value v;
    v.kind_ = ValueKind::Ellipsis;
    return v;
}

Value Value::opaque(std::string text) {
    Value v;
    v.kind_ = ValueKind::Opaque;
    v.text_ = std::move(text);
    return v;
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
