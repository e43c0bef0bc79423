#include "models/NodeFormat.h"

#include "graph/GraphStats.h"

#include <QObject>
#include <QStringList>

namespace jointscope::views {

namespace {

bool looksLikeParameter(const Node& node) {
    const std::string& n = node.name;
    return node.meta.descriptor.find("Param") != std::string::npos ||
           node.meta.descriptor.find("Buffer") != std::string::npos || n.find("_parameters_") != std::string::npos ||
           n.find("_buffers_") != std::string::npos || n.rfind("p_", 0) == 0 || n.rfind("b_", 0) == 0;
}

QString symText(const SymInt& s) { return s.isSymbolic() ? QString::fromStdString(s.expr) : QString::number(s.value); }

} // namespace

std::vector<NodeRole> classifyNodes(const Graph& graph) {
    const std::vector<bool> backward = backwardMask(graph);
    std::vector<NodeRole> roles(graph.size(), NodeRole::Forward);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        switch (node.op) {
        case NodeOp::Placeholder:
            roles[id] = isTangent(node)        ? NodeRole::Tangent
                        : looksLikeParameter(node) ? NodeRole::Parameter
                        : isPrimal(node)           ? NodeRole::Primal
                                                   : NodeRole::Input;
            break;
        case NodeOp::GetAttr: roles[id] = NodeRole::GetAttr; break;
        case NodeOp::Output: roles[id] = NodeRole::Output; break;
        default: roles[id] = backward[id] ? NodeRole::Backward : NodeRole::Forward; break;
        }
    }
    return roles;
}

QString roleName(NodeRole role) {
    switch (role) {
    case NodeRole::Primal: return QStringLiteral("primal");
    case NodeRole::Tangent: return QStringLiteral("tangent");
    case NodeRole::Parameter: return QStringLiteral("parameter");
    case NodeRole::Input: return QStringLiteral("input");
    case NodeRole::Forward: return QStringLiteral("forward");
    case NodeRole::Backward: return QStringLiteral("backward");
    case NodeRole::GetAttr: return QStringLiteral("get_attr");
    case NodeRole::Output: return QStringLiteral("output");
    }
    return {};
}

RoleColors roleColors(NodeRole role) {
    switch (role) {
    case NodeRole::Primal: return {QColor(0xd1, 0xfa, 0xe5), QColor(0x05, 0x96, 0x69)};
    case NodeRole::Tangent: return {QColor(0xed, 0xe9, 0xfe), QColor(0x7c, 0x3a, 0xed)};
    case NodeRole::Parameter: return {QColor(0xfe, 0xf3, 0xc7), QColor(0xb4, 0x53, 0x09)};
    case NodeRole::Input: return {QColor(0xe0, 0xf2, 0xfe), QColor(0x02, 0x84, 0xc7)};
    case NodeRole::Forward: return {QColor(0xdb, 0xea, 0xfe), QColor(0x25, 0x63, 0xeb)};
    case NodeRole::Backward: return {QColor(0xff, 0xed, 0xd5), QColor(0xea, 0x58, 0x0c)};
    case NodeRole::GetAttr: return {QColor(0xfc, 0xe7, 0xf3), QColor(0xbe, 0x18, 0x5d)};
    case NodeRole::Output: return {QColor(0xe5, 0xe7, 0xeb), QColor(0x11, 0x18, 0x27)};
    }
    return {Qt::white, Qt::black};
}

QString opLabel(const Node& node) {
    switch (node.op) {
    case NodeOp::Placeholder:
    case NodeOp::Output: return QString::fromUtf8(nodeOpName(node.op).data(), qsizetype(nodeOpName(node.op).size()));
    case NodeOp::GetAttr: return node.subgraph >= 0 ? QStringLiteral("get_attr (body)") : QStringLiteral("get_attr");
    default: break;
    }
    if (!node.target.op.empty()) {
        QString label = QString::fromStdString(node.target.op);
        if (!node.target.overload.empty() && node.target.overload != "default")
            label += QLatin1Char('.') + QString::fromStdString(node.target.overload);
        return label;
    }
    return QString::fromStdString(node.target.text);
}

QString formatShape(const TensorMeta& tensor) {
    QStringList dims;
    for (const SymInt& s : tensor.sizes)
        dims << symText(s);
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString formatStride(const TensorMeta& tensor) {
    if (tensor.strides.empty())
        return {};
    QStringList dims;
    for (const SymInt& s : tensor.strides)
        dims << symText(s);
    return QLatin1Char('(') + dims.join(QStringLiteral(", ")) + (dims.size() == 1 ? QStringLiteral(",)") : QStringLiteral(")"));
}

QString formatOutputShapes(const Node& node) {
    switch (node.outputKind) {
    case OutputKind::Tensor: return node.outputs.empty() || !node.outputs[0].known() ? QString() : formatShape(node.outputs[0]);
    case OutputKind::Tuple: {
        QStringList parts;
        for (const TensorMeta& t : node.outputs)
            parts << (t.known() ? formatShape(t) : QStringLiteral("?"));
        return QLatin1Char('(') + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    case OutputKind::SymInt: return QStringLiteral("Sym(%1)").arg(QString::fromStdString(node.symValue));
    case OutputKind::SymFloat: return QStringLiteral("SymFloat(%1)").arg(QString::fromStdString(node.symValue));
    case OutputKind::SymBool: return QStringLiteral("SymBool(%1)").arg(QString::fromStdString(node.symValue));
    case OutputKind::None: return QStringLiteral("None");
    case OutputKind::Unknown: return {};
    }
    return {};
}

QString formatOutputDTypes(const Node& node) {
    auto name = [](const TensorMeta& t) {
        const auto abbr = abbreviation(t.dtype);
        return t.known() ? QString::fromLatin1(abbr.data(), qsizetype(abbr.size())) : QStringLiteral("?");
    };
    if (node.outputKind == OutputKind::Tensor && !node.outputs.empty() && node.outputs[0].known())
        return name(node.outputs[0]);
    if (node.outputKind == OutputKind::Tuple) {
        QStringList parts;
        for (const TensorMeta& t : node.outputs)
            parts << name(t);
        return QLatin1Char('(') + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    return {};
}

std::optional<uint64_t> outputBytes(const Node& node) {
    std::optional<uint64_t> total;
    for (const TensorMeta& t : node.outputs)
        if (auto b = t.bytes())
            total = total.value_or(0) + *b;
    return total;
}

QString formatValue(const Value& value, const Graph& graph) {
    auto join = [&](const std::vector<Value>& items, const char* open, const char* close, bool tuple) {
        QStringList parts;
        for (const Value& v : items)
            parts << formatValue(v, graph);
        QString text = QLatin1String(open) + parts.join(QStringLiteral(", "));
        if (tuple && items.size() == 1)
            text += QLatin1Char(',');
        return text + QLatin1String(close);
    };
    switch (value.kind()) {
    case ValueKind::None: return QStringLiteral("None");
    case ValueKind::Bool: return value.asBool() ? QStringLiteral("True") : QStringLiteral("False");
    case ValueKind::Int: return QString::number(value.asInt());
    case ValueKind::Float: return QString::number(value.asFloat(), 'g', 17);
    case ValueKind::String: return QLatin1Char('\'') + QString::fromStdString(value.text()) + QLatin1Char('\'');
    case ValueKind::NodeRef:
        return value.asNode() < graph.size() ? QString::fromStdString(graph.node(value.asNode()).name)
                                             : QStringLiteral("<node %1>").arg(value.asNode());
    case ValueKind::List: return join(value.items(), "[", "]", false);
    case ValueKind::Tuple: return join(value.items(), "(", ")", true);
    case ValueKind::Dict: {
        QStringList parts;
        const auto& items = value.items();
        for (size_t i = 0; i + 1 < items.size(); i += 2)
            parts << formatValue(items[i], graph) + QStringLiteral(": ") + formatValue(items[i + 1], graph);
        return QLatin1Char('{') + parts.join(QStringLiteral(", ")) + QLatin1Char('}');
    }
    case ValueKind::Slice: {
        QStringList parts;
        for (const Value& v : value.items())
            parts << formatValue(v, graph);
        return QStringLiteral("slice(%1)").arg(parts.join(QStringLiteral(", ")));
    }
    case ValueKind::DType: {
        const auto name = torchName(value.asDType());
        return QStringLiteral("torch.") + QString::fromLatin1(name.data(), qsizetype(name.size()));
    }
    case ValueKind::Device:
        return value.deviceIndex() >= 0 ? QStringLiteral("device(type='%1', index=%2)").arg(QString::fromStdString(value.text())).arg(value.deviceIndex())
                                        : QStringLiteral("device(type='%1')").arg(QString::fromStdString(value.text()));
    case ValueKind::Layout:
    case ValueKind::MemoryFormat: return QStringLiteral("torch.") + QString::fromStdString(value.text());
    case ValueKind::SymExpr:
    case ValueKind::Opaque: return QString::fromStdString(value.text());
    case ValueKind::Ellipsis: return QStringLiteral("...");
    }
    return {};
}

QString graphStatsText(const GraphStats& stats) {
    QString text = QObject::tr("%1 nodes · %2 forward · %3 backward · %4 primals · %5 tangents · %6 tensor data")
                       .arg(stats.nodes)
                       .arg(stats.forward)
                       .arg(stats.backward)
                       .arg(stats.primals)
                       .arg(stats.tangents)
                       .arg(views::formatBytes(stats.tensorBytes));
    if (stats.subgraphs > 0)
        text += stats.uniqueSubgraphs < stats.subgraphs
                    ? QObject::tr(" · %1 HOP bodies (%2 unique)").arg(stats.subgraphs).arg(stats.uniqueSubgraphs)
                    : QObject::tr(" · %1 HOP bodies").arg(stats.subgraphs);
    return text;
}

} // namespace jointscope::views
