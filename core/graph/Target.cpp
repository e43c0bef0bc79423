#include "graph/Target.h"

#include <vector>

namespace jointscope {
namespace {

std::vector<std::string_view> splitDots(std::string_view text) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        size_t dot = text.find('.', start);
        parts.push_back(text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    return parts;
}

} // namespace

Target Target::name(std::string_view text) {
    Target t;
    t.kind = TargetKind::Name;
    t.text = std::string(text);
    return t;
}

Target Target::parseFunction(std::string_view text) {
    Target t;
    std::vector<std::string_view> parts = splitDots(text);
    // str(OpOverload) drops the "torch.ops." prefix: "aten.mm.default".
    size_t first = 0;
    if (parts.size() >= 3 && parts[0] == "torch" && parts[1] == "ops")
        first = 2;
    const bool looksLikeOp = first == 2 || (parts.size() == 3 && parts[0] != "torch" && parts[0] != "operator" &&
                                            parts[0] != "builtins");
    if (looksLikeOp && parts.size() - first >= 2) {
        t.ns = std::string(parts[first]);
        t.op = std::string(parts[first + 1]);
        if (parts.size() - first >= 3)
            t.overload = std::string(parts[first + 2]);
        if (t.ns == "higher_order")
            t.kind = TargetKind::HigherOrder;
        else
            t.kind = t.overload.empty() ? TargetKind::OpPacket : TargetKind::OpOverload;
        t.text = "torch.ops." + t.ns + "." + t.op + (t.overload.empty() ? "" : "." + t.overload);
        return t;
    }
    t.text = std::string(text);
    if (parts.size() == 2 && (parts[0] == "operator" || parts[0] == "_operator")) {
        t.kind = TargetKind::Operator;
        t.ns = "operator";
        t.op = std::string(parts[1]);
        t.text = "operator." + t.op;
        return t;
    }
    t.kind = TargetKind::Python;
    if (parts.size() >= 2) {
        t.ns = std::string(parts[0]);
        t.op = std::string(parts.back());
    } else {
        t.op = std::string(text);
    }
    return t;
}

} // namespace jointscope
