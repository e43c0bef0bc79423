// NodeTableModel over a hand-built joint graph and over the real gpt_block2 joint graph (torch 1.13),
// checked against joint.meta.json (torch's own tensor_meta).
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/NodeTableModel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSignalSpy>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

// x (primal) -> a = sin(x) (forward); t (tangent); b = mul(a, t) (backward); output(a, b).
Graph tinyJoint() {
    Graph g;
    Node x = makeNode("primals_1", NodeOp::Placeholder, "primals_1");
    x.outputKind = OutputKind::Tensor;
    x.outputs = {f32({4, 8})};
    const NodeId xi = g.addNode(x);
    Node t = makeNode("tangents_1", NodeOp::Placeholder, "tangents_1");
    t.outputKind = OutputKind::Tensor;
    t.outputs = {f32({4, 8})};
    const NodeId ti = g.addNode(t);
    Node a = makeNode("sin", NodeOp::CallFunction, "torch.ops.aten.sin.default", {Value::nodeRef(xi)});
    a.outputKind = OutputKind::Tensor;
    a.outputs = {f32({4, 8})};
    const NodeId ai = g.addNode(a);
    Node b = makeNode("mul", NodeOp::CallFunction, "torch.ops.aten.mul.Tensor",
                      {Value::nodeRef(ai), Value::nodeRef(ti)});
    const NodeId bi = g.addNode(b);
    g.addNode(makeNode("output", NodeOp::Output, "output",
                       {Value::list({Value::nodeRef(ai), Value::nodeRef(bi)})}));
    g.computeUsers();
    return g;
}

QString cell(const NodeTableModel& m, int row, int column, int role = Qt::DisplayRole) {
    return m.data(m.index(row, column), role).toString();
}

QString dtypeAbbreviation(const QString& torchName) {
    static const QMap<QString, QString> names = {{"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"},
                                                 {"int64", "i64"},   {"bool", "b8"},     {"float64", "f64"}};
    return names.value(torchName, torchName);
}

uint64_t itemBytes(const QString& torchName) {
    static const QMap<QString, uint64_t> sizes = {{"float32", 4}, {"float16", 2}, {"bfloat16", 2},
                                                  {"int64", 8},   {"bool", 1},    {"float64", 8}};
    return sizes.value(torchName, 0);
}

} // namespace

class TestNodeTableModel : public QObject {
    Q_OBJECT
private slots:
    void emptyModel() {
        NodeTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(NodeTableModel::ColumnCount));
        QVERIFY(!model.data(model.index(0, 0)).isValid());
    }

    void tinyJointColumns() {
        const Graph g = tinyJoint();
        NodeTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGraph(&g);
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(cell(model, 0, NodeTableModel::NameColumn), QStringLiteral("primals_1"));
        QCOMPARE(cell(model, 0, NodeTableModel::OpColumn), QStringLiteral("placeholder"));
        QCOMPARE(cell(model, 2, NodeTableModel::TargetColumn), QStringLiteral("torch.ops.aten.sin.default"));
        QCOMPARE(cell(model, 2, NodeTableModel::ShapeColumn), QStringLiteral("[4, 8]"));
        QCOMPARE(cell(model, 2, NodeTableModel::DTypeColumn), QStringLiteral("f32"));
        QCOMPARE(
            model.data(model.index(2, NodeTableModel::BytesColumn), NodeTableModel::SortRole).toULongLong(),
            4ull * 8 * 4);
        QCOMPARE(cell(model, 2, NodeTableModel::BytesColumn), QStringLiteral("128 B"));
        QCOMPARE(cell(model, 3, NodeTableModel::ShapeColumn), QString()); // mul has no metadata
        QCOMPARE(cell(model, 0, NodeTableModel::PassColumn), QStringLiteral("primal"));
        QCOMPARE(cell(model, 1, NodeTableModel::PassColumn), QStringLiteral("tangent"));
        QCOMPARE(cell(model, 2, NodeTableModel::PassColumn), QStringLiteral("forward"));
        QCOMPARE(cell(model, 3, NodeTableModel::PassColumn), QStringLiteral("backward"));
        QCOMPARE(cell(model, 4, NodeTableModel::PassColumn), QStringLiteral("output"));
        QCOMPARE(model.data(model.index(3, 0), NodeTableModel::NodeIdRole).toUInt(), 3u);
        QVERIFY(
            cell(model, 3, 0, NodeTableModel::SearchTextRole).contains(QStringLiteral("aten.mul.Tensor")));
    }

    void resetClears() {
        const Graph g = tinyJoint();
        NodeTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGraph(&g);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setGraph(nullptr);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), 0);
    }

    // The canvas hands over the roles it classified; roles of another size are not trusted.
    void rolesHandedOver() {
        const Graph g = tinyJoint();
        NodeTableModel model;
        std::vector<NodeRole> given(g.size(), NodeRole::Backward);
        model.setGraph(&g, given);
        for (NodeId id = 0; id < g.size(); ++id)
            QCOMPARE(model.nodeRole(id), NodeRole::Backward);
        model.setGraph(&g, std::vector<NodeRole>(g.size() + 1, NodeRole::Backward));
        const std::vector<NodeRole> own = classifyNodes(g);
        QVERIFY(own != given); // tinyJoint has placeholders and forward nodes
        for (NodeId id = 0; id < g.size(); ++id)
            QCOMPARE(model.nodeRole(id), own[id]);
    }

    void gptBlockAgainstTorchMeta() {
        auto file = GraphFile::open(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        JS_VERIFY_EXPECTED(file);
        auto graph = file->load(0);
        JS_VERIFY_EXPECTED(graph);
        NodeTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setGraph(&*graph);

        const QJsonDocument meta = QJsonDocument::fromJson(
            QByteArray::fromStdString(readFile(sharedPath("graphs/torch-1.13/gpt_block2/joint.meta.json"))));
        const QJsonArray nodes = meta.object().value(QStringLiteral("nodes")).toArray();
        QVERIFY(nodes.size() > 100);
        QCOMPARE(model.rowCount(), int(nodes.size()));
        int checkedShapes = 0;
        for (int row = 0; row < nodes.size(); ++row) {
            const QJsonObject n = nodes[row].toObject();
            QCOMPARE(cell(model, row, NodeTableModel::NameColumn), n.value("name").toString());
            QCOMPARE(cell(model, row, NodeTableModel::OpColumn), n.value("op").toString());
            if (!n.contains("shape") || !n.value("shape").isArray())
                continue;
            QStringList dims;
            uint64_t numel = 1;
            for (const QJsonValue& d : n.value("shape").toArray()) {
                dims << QString::number(d.toInteger());
                numel *= uint64_t(d.toInteger());
            }
            QCOMPARE(cell(model, row, NodeTableModel::ShapeColumn),
                     QLatin1Char('[') + dims.join(", ") + QLatin1Char(']'));
            const QString dtype = n.value("dtype").toString();
            QCOMPARE(cell(model, row, NodeTableModel::DTypeColumn), dtypeAbbreviation(dtype));
            QCOMPARE(model.data(model.index(row, NodeTableModel::BytesColumn), NodeTableModel::SortRole)
                         .toULongLong(),
                     numel * itemBytes(dtype));
            ++checkedShapes;
        }
        QVERIFY(checkedShapes > 100);

        // Placeholders by name: primals_* are primals, tangents_* tangents; the last node is the output.
        int primals = 0, tangents = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QString name = cell(model, row, NodeTableModel::NameColumn);
            if (name.startsWith("primals_")) {
                QCOMPARE(cell(model, row, NodeTableModel::PassColumn), QStringLiteral("primal"));
                ++primals;
            } else if (name.startsWith("tangents_")) {
                QCOMPARE(cell(model, row, NodeTableModel::PassColumn), QStringLiteral("tangent"));
                ++tangents;
            }
        }
        QCOMPARE(primals,
                 25); // the tree_flatten_spec line of joint.txt lists primals_1 .. primals_25, tangents_1
        QCOMPARE(tangents, 1);
        QCOMPARE(cell(model, model.rowCount() - 1, NodeTableModel::PassColumn), QStringLiteral("output"));
    }
};

QTEST_GUILESS_MAIN(TestNodeTableModel)
#include "tst_model_nodetable.moc"
