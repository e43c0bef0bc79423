// Prints a Graph as FX readable text in the style of torch 2.x print_readable(): the reader's inverse.
#include "io/FxWriter.h"

#include "io/FxAnnotation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace jointscope {
namespace {

bool isIdentifier(std::string_view s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

// FX's _format_target: self.a.b, getattr(self.layers, "0").
std::string formatTarget(std::string_view base, std::string_view path) {
    std::string r(base);
    size_t start = 0;
    while (start <= path.size()) {
        size_t dot = path.find('.', start);
        if (dot == std::string_view::npos)
            dot = path.size();
        const std::string_view part = path.substr(start, dot - start);
        if (isIdentifier(part)) {
            r += '.';
            r += part;
        } else {
            r = "getattr(" + r + ", \"" + std::string(part) + "\")";
        }
        start = dot + 1;
    }
    return r;
}

struct InfixForm {
    std::string_view op;
    std::string_view spelling;
    bool unary;
};

constexpr InfixForm kInfixForms[] = {
    {"add", "+", false},     {"sub", "-", false},   {"mul", "*", false},  {"floordiv", "//", false},
    {"truediv", "/", false}, {"mod", "%", false},   {"pow", "**", false}, {"lshift", "<<", false},
    {"rshift", ">>", false}, {"and_", "&", false},  {"or_", "|", false},  {"xor", "^", false},
    {"matmul", "@", false},  {"eq", "==", false},   {"ne", "!=", false},  {"lt", "<", false},
    {"gt", ">", false},      {"le", "<=", false},   {"ge", ">=", false},  {"neg", "-", true},
    {"pos", "+", true},      {"invert", "~", true},
};

const InfixForm* infixForm(const Node& node) {
    if (node.target.kind != TargetKind::Operator || !node.kwargs.empty())
        return nullptr;
    for (const InfixForm& form : kInfixForms)
        if (node.target.op == form.op && node.args.size() == (form.unary ? 1u : 2u))
            return &form;
    return nullptr;
}

class FxTextWriter {
public:
    explicit FxTextWriter(const FxWriteOptions& options) : options_(options) {}

    std::string take() { return std::move(out_); }

    void writeModule(const Graph& graph, size_t indent) {
        line(indent) += "class " + (graph.name.empty() ? std::string("GraphModule") : graph.name) +
                        "(torch.nn.Module):\n";
        writeForward(graph, indent + 4);
        for (const auto& sub : graph.subgraphs()) {
            out_ += '\n';
            writeModule(*sub, indent + 4);
        }
    }

private:
    std::string& line(size_t indent) {
        out_.append(indent, ' ');
        return out_;
    }

    void writeValue(const Graph& graph, const Value& v) { appendPythonValue(out_, v, styleFor(graph)); }

    void writeItems(const Graph& graph, const std::vector<Value>& items, size_t first = 0) {
        appendPythonItems(out_, std::span(items).subspan(std::min(first, items.size())), styleFor(graph));
    }

    // A node reference is the node's name.
    PythonValueStyle styleFor(const Graph& graph) {
        return {[this, &graph](NodeId id) {
                    out_ += id < graph.size() ? graph.node(id).name : std::string("<missing node>");
                },
                false};
    }

    void writeCallArgs(const Graph& graph, const Node& node, size_t firstArg) {
        out_ += '(';
        writeItems(graph, node.args, firstArg);
        bool first = node.args.size() <= firstArg;
        for (const auto& [key, value] : node.kwargs) {
            if (!first)
                out_ += ", ";
            first = false;
            out_ += key + " = ";
            writeValue(graph, value);
        }
        out_ += ')';
    }

    std::string annotationOf(const Node& node) const {
        return options_.annotations ? fx::formatAnnotation(node) : std::string();
    }

    void writeParameter(const Graph& graph, const Node& node) {
        out_ += node.target.text.empty() ? node.name : node.target.text;
        if (std::string annotation = annotationOf(node); !annotation.empty())
            out_ += ": \"" + annotation + "\"";
        if (!node.args.empty()) {
            out_ += " = ";
            writeValue(graph, node.args[0]);
        }
    }

    void writeSignature(const Graph& graph, size_t indent) {
        std::vector<const Node*> placeholders;
        bool anyDescriptor = false;
        for (const Node& node : graph.nodes())
            if (node.op == NodeOp::Placeholder) {
                placeholders.push_back(&node);
                anyDescriptor |= !node.meta.descriptor.empty();
            }
        if (anyDescriptor && options_.descriptors) {
            line(indent) += "def forward(\n";
            line(indent + 4) += "self,\n";
            for (const Node* node : placeholders) {
                line(indent + 4);
                writeParameter(graph, *node);
                out_ += ',';
                if (!node->meta.descriptor.empty())
                    out_ += "  # " + node->meta.descriptor;
                out_ += '\n';
            }
            line(indent) += "):\n";
            return;
        }
        line(indent) += "def forward(self";
        for (const Node* node : placeholders) {
            out_ += ", ";
            writeParameter(graph, *node);
        }
        out_ += "):\n";
    }

    void writeStackTrace(const Node& node, size_t indent) {
        if (!options_.stackTraces || node.meta.stackTrace == previousTrace_)
            return;
        previousTrace_ = node.meta.stackTrace;
        out_ += '\n';
        if (previousTrace_.empty()) {
            line(indent) += "# No stacktrace found for following nodes\n";
            return;
        }
        for (const std::string& text : previousTrace_)
            line(indent) += " # " + text + "\n";
    }

    void writeRhs(const Graph& graph, const Node& node) {
        switch (node.op) {
        case NodeOp::GetAttr:
            out_ += formatTarget("self", node.target.text);
            return;
        case NodeOp::CallModule:
            out_ += formatTarget("self", node.target.text);
            writeCallArgs(graph, node, 0);
            return;
        case NodeOp::CallMethod:
            if (!node.args.empty()) {
                writeValue(graph, node.args[0]);
                out_ += "." + node.target.text;
                writeCallArgs(graph, node, 1);
                return;
            }
            break;
        case NodeOp::CallFunction:
            if (const InfixForm* form = infixForm(node)) {
                if (form->unary) {
                    out_ += form->spelling;
                    writeValue(graph, node.args[0]);
                } else {
                    writeValue(graph, node.args[0]);
                    out_ += ' ';
                    out_ += form->spelling;
                    out_ += ' ';
                    writeValue(graph, node.args[1]);
                }
                return;
            }
            if (node.target.isGetItem() && node.args.size() == 2 && node.kwargs.empty()) {
                writeValue(graph, node.args[0]);
                out_ += '[';
                writeValue(graph, node.args[1]);
                out_ += ']';
                return;
            }
            if (node.target.kind == TargetKind::Python && node.target.text == "getattr" &&
                node.args.size() == 2 && node.kwargs.empty() && node.args[0].kind() == ValueKind::NodeRef &&
                node.args[1].kind() == ValueKind::String && isIdentifier(node.args[1].text())) {
                writeValue(graph, node.args[0]);
                out_ += "." + node.args[1].text();
                return;
            }
            break;
        default:
            break;
        }
        out_ += node.target.text;
        writeCallArgs(graph, node, 0);
    }

    // "return (a, b)", or one element per line with its AOT descriptor comment when the graph has them.
    void writeReturn(const Graph& graph, const Node& output, size_t indent) {
        const Value result = output.args.empty() ? Value::none() : output.args[0];
        std::vector<std::string> descriptors;
        for (const auto& [key, json] : output.meta.extra)
            if (key == fx::kOutputDescriptorsKey && !fx::fromJsonStringArray(json, descriptors))
                descriptors.clear();
        if (!options_.descriptors || !result.isSequence() || descriptors.size() != result.items().size()) {
            line(indent) += "return ";
            writeValue(graph, result);
            out_ += '\n';
            return;
        }
        const bool list = result.kind() == ValueKind::List;
        line(indent) += list ? "return [\n" : "return (\n";
        for (size_t i = 0; i < descriptors.size(); ++i) {
            line(indent + 4);
            writeValue(graph, result.items()[i]);
            out_ += ',';
            if (!descriptors[i].empty())
                out_ += "  # " + descriptors[i];
            out_ += '\n';
        }
        line(indent) += list ? "]\n" : ")\n";
    }

    void writeForward(const Graph& graph, size_t indent) {
        writeSignature(graph, indent);
        const size_t body = indent + 4;
        for (const Node& node : graph.nodes())
            if (node.op == NodeOp::Placeholder && !node.target.text.empty() && node.target.text != node.name)
                line(body) += node.name + " = " + node.target.text + "\n";
        previousTrace_.clear();
        bool returned = false;
        for (const Node& node : graph.nodes()) {
            if (node.op == NodeOp::Placeholder)
                continue;
            if (node.op == NodeOp::Output) {
                writeReturn(graph, node, body);
                returned = true;
                continue;
            }
            writeStackTrace(node, body);
            line(body) += node.name;
            if (std::string annotation = annotationOf(node); !annotation.empty())
                out_ += ": \"" + annotation + "\"";
            out_ += " = ";
            writeRhs(graph, node);
            out_ += '\n';
        }
        if (!returned)
            line(body) += "return None\n";
    }

    FxWriteOptions options_;
    std::string out_;
    std::vector<std::string> previousTrace_;
};

} // namespace

// Python's repr(float): shortest round-trip digits, exponent form below 1e-4 and from 1e16 on.
void appendPythonFloat(std::string& out, double v) {
    if (std::isnan(v)) {
        out += "nan";
        return;
    }
    if (std::isinf(v)) {
        out += v < 0 ? "-inf" : "inf";
        return;
    }
    char buf[64];
    const auto result = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<size_t>(result.ptr - buf));
    const size_t e = sci.find('e');
    std::string_view mantissa = sci.substr(0, e);
    int exponent = 0;
    std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exponent);
    if (!mantissa.empty() && mantissa.front() == '-') {
        out += '-';
        mantissa.remove_prefix(1);
    }
    if (exponent < -4 || exponent >= 16) {
        out += mantissa;
        out += exponent < 0 ? "e-" : "e+";
        const int magnitude = exponent < 0 ? -exponent : exponent;
        if (magnitude < 10)
            out += '0';
        out += std::to_string(magnitude);
        return;
    }
    std::string digits;
    for (char c : mantissa)
        if (c != '.')
            digits += c;
    const int point = exponent + 1; // digits before the decimal point
    const int count = static_cast<int>(digits.size());
    if (point <= 0) {
        out += "0.";
        out.append(static_cast<size_t>(-point), '0');
        out += digits;
    } else if (point >= count) {
        out += digits;
        out.append(static_cast<size_t>(point - count), '0');
        out += ".0";
    } else {
        out.append(digits, 0, static_cast<size_t>(point));
        out += '.';
        out.append(digits, static_cast<size_t>(point), std::string::npos);
    }
}

// Python's repr(str): single quotes unless the text has ' and no ".
void appendPythonItems(std::string& out, std::span<const Value> items, const PythonValueStyle& style) {
    for (size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ", ";
        appendPythonValue(out, items[i], style);
    }
}

void appendPythonValue(std::string& out, const Value& v, const PythonValueStyle& style) {
    auto enclosed = [&](std::string_view open, std::string_view close) {
        out += open;
        appendPythonItems(out, v.items(), style);
        out += close;
    };
    switch (v.kind()) {
    case ValueKind::None:
        out += "None";
        return;
    case ValueKind::Bool:
        out += v.asBool() ? "True" : "False";
        return;
    case ValueKind::Int:
        out += std::to_string(v.asInt());
        return;
    case ValueKind::Float:
        appendPythonFloat(out, v.asFloat());
        return;
    case ValueKind::String:
        appendPythonString(out, v.text());
        return;
    case ValueKind::NodeRef:
        style.nodeRef(v.asNode());
        return;
    case ValueKind::List:
        enclosed("[", "]");
        return;
    case ValueKind::Tuple:
        enclosed("(", v.items().size() == 1 ? ",)" : ")");
        return;
    case ValueKind::Dict:
        out += '{';
        for (size_t i = 0; i + 1 < v.items().size(); i += 2) {
            if (i)
                out += ", ";
            appendPythonValue(out, v.items()[i], style);
            out += ": ";
            appendPythonValue(out, v.items()[i + 1], style);
        }
        out += '}';
        return;
    case ValueKind::Slice:
        enclosed("slice(", ")");
        return;
    case ValueKind::DType:
        out += "torch.";
        out += torchName(v.asDType());
        return;
    case ValueKind::Device:
        out += style.shortDevice ? "device(" : "device(type=";
        appendPythonString(out, v.text());
        if (v.deviceIndex() >= 0) {
            out += style.shortDevice ? ", " : ", index=";
            out += std::to_string(v.deviceIndex());
        }
        out += ')';
        return;
    case ValueKind::Layout:
    case ValueKind::MemoryFormat:
        out += "torch.";
        out += v.text();
        return;
    case ValueKind::SymExpr:
    case ValueKind::Opaque:
        out += v.text();
        return;
    case ValueKind::Ellipsis:
        out += "...";
        return;
    }
}

void appendPythonString(std::string& out, std::string_view s) {
    const bool doubleQuote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
    const char quote = doubleQuote ? '"' : '\'';
    out += quote;
    for (char c : s) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\\' || c == quote) {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (byte < 0x20 || byte == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", byte);
            out += buf;
        } else {
            out += c;
        }
    }
    out += quote;
}

std::string writeFxText(const Graph& graph, const FxWriteOptions& options) {
    FxTextWriter writer(options);
    writer.writeModule(graph, 0);
    return writer.take();
}

} // namespace jointscope
