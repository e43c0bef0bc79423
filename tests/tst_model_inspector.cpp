// InspectorModel: sections, arguments with node references, tensor metadata, users; on a hand-built graph
// and on gpt_block2's addmm, checked against joint.txt and joint.meta.json.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/InspectorModel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QRegularExpression>
#include <QSignalSpy>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

QModelIndex section(const InspectorModel& m, const QString& title) {
    const int row = m.sectionRow(title);
    return row < 0 ? QModelIndex() : m.index(row, 0);
}

QString key(const InspectorModel& m, const QModelIndex& parent, int row) {
    return m.index(row, 0, parent).data().toString();
}
QString value(const InspectorModel& m, const QModelIndex& parent, int row) {
    return m.index(row, 1, parent).data().toString();
}

// Value column of the row named `name` under `parent`.
QString field(const InspectorModel& m, const QModelIndex& parent, const QString& name) {
    for (int r = 0; r < m.rowCount(parent); ++r)
        if (key(m, parent, r) == name)
            return value(m, parent, r);
    return QStringLiteral("<absent>");
}

} // namespace

class TestInspectorModel : public QObject {
    Q_OBJECT
private slots:
    void handBuilt() {
        Graph g;
        Node x = makeNode("primals_1", NodeOp::Placeholder, "primals_1");
        x.outputKind = OutputKind::Tensor;
        TensorMeta t;
        t.dtype = DType::BFloat16;
        t.sizes = {{2, {}}, {0, "s0"}};
        t.strides = {{0, "s0"}, {1, {}}};
        t.device = {"cuda", 0};
        x.outputs = {t};
        const NodeId xi = g.addNode(x);
        Node s = makeNode("sin", NodeOp::CallFunction, "torch.ops.aten.sin.default", {Value::nodeRef(xi)});
        s.meta.stackTrace = {"File: model.py:12 in forward, code: y = x.sin()"};
        s.meta.recompute = "MUST_SAVE";
        s.kwargs = {{"dim", Value::integer(-1)}};
        const NodeId si = g.addNode(s);
        g.addNode(makeNode("output", NodeOp::Output, "output",
                           {Value::tuple({Value::nodeRef(si), Value::nodeRef(xi)})}));
        g.computeUsers();

        InspectorModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNode(&g, xi);
        const QModelIndex tensor = section(model, "Tensor");
        QVERIFY(tensor.isValid());
        QCOMPARE(field(model, tensor, "shape"), QStringLiteral("[2, s0]"));
        QCOMPARE(field(model, tensor, "dtype"), QStringLiteral("bfloat16"));
        QCOMPARE(field(model, tensor, "stride"), QStringLiteral("(s0, 1)"));
        QCOMPARE(field(model, tensor, "device"), QStringLiteral("cuda:0"));
        QCOMPARE(field(model, tensor, "bytes"), QStringLiteral("<absent>")); // symbolic size: unknown bytes
        const QModelIndex users = section(model, "Users");
        QCOMPARE(model.rowCount(users), 2);
        QCOMPARE(key(model, users, 0), QStringLiteral("sin"));
        QCOMPARE(model.index(0, 0, users).data(InspectorModel::NodeRefRole).toUInt(), si);

        model.setNode(&g, si);
        const QModelIndex args = section(model, "Arguments");
        QCOMPARE(model.rowCount(args), 2);
        QCOMPARE(value(model, args, 0), QStringLiteral("primals_1"));
        QCOMPARE(model.index(0, 1, args).data(InspectorModel::NodeRefRole).toUInt(), xi);
        QCOMPARE(key(model, args, 1), QStringLiteral("dim"));
        QCOMPARE(value(model, args, 1), QStringLiteral("-1"));
        QVERIFY(!model.index(1, 1, args).data(InspectorModel::NodeRefRole).isValid());
        QCOMPARE(field(model, section(model, "Meta"), "recompute"), QStringLiteral("MUST_SAVE"));
        QCOMPARE(value(model, section(model, "Stack trace"), 0),
                 QStringLiteral("File: model.py:12 in forward, code: y = x.sin()"));
        QCOMPARE(section(model, "Tensor"), QModelIndex()); // no metadata printed for sin

        model.setNode(&g, 2); // output: a tuple of references, one child row per element
        const QModelIndex outArgs = section(model, "Arguments");
        QCOMPARE(value(model, outArgs, 0), QStringLiteral("(sin, primals_1)"));
        const QModelIndex tuple = model.index(0, 0, outArgs);
        QCOMPARE(model.rowCount(tuple), 2);
        QCOMPARE(model.index(1, 1, tuple).data(InspectorModel::NodeRefRole).toUInt(), xi);
        QCOMPARE(model.parent(model.index(1, 1, tuple)), tuple);

        model.setNode(nullptr, kNoNode);
        QCOMPARE(model.rowCount(), 0);
    }

    void gptBlockAddmm() {
        const std::string text = readFile(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        auto file = GraphFile::open(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        JS_VERIFY_EXPECTED(file);
        auto graph = file->load(0);
        JS_VERIFY_EXPECTED(graph);
        const auto addmm = graph->find("addmm");
        QVERIFY(addmm.has_value());

        InspectorModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNode(&*graph, *addmm);
        const QModelIndex general = section(model, "Node");
        QCOMPARE(field(model, general, "target"), QStringLiteral("torch.ops.aten.addmm.default"));
        // joint.txt: addmm = torch.ops.aten.addmm.default(primals_4, view, t)
        const QModelIndex args = section(model, "Arguments");
        QCOMPARE(model.rowCount(args), 3);
        const QStringList expectedArgs = {"primals_4", "view", "t"};
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(value(model, args, i), expectedArgs[i]);
            const QVariant ref = model.index(i, 1, args).data(InspectorModel::NodeRefRole);
            QVERIFY(ref.isValid());
            QCOMPARE(QString::fromStdString(graph->node(ref.toUInt()).name), expectedArgs[i]);
        }

        // Users of `view`: statements of joint.txt whose call arguments (before the "; x = None" cleanup)
        // read it.
        QStringList expectedUsers;
        const QRegularExpression assign(QStringLiteral("^\\s+(\\w+) = ([^;]*)"));
        const QRegularExpression reads(QStringLiteral("\\bview\\b"));
        for (const QString& line : QString::fromStdString(text).split('\n')) {
            const auto m = assign.match(line);
            if (!m.hasMatch() || m.captured(1) == "view")
                continue;
            const QString rhs = m.captured(2);
            const QString arguments =
                rhs.indexOf('(') >= 0 ? rhs.mid(rhs.indexOf('(')) : rhs; // not the target
            if (reads.match(arguments).hasMatch())
                expectedUsers << m.captured(1);
        }
        QCOMPARE(expectedUsers.size(), 2);
        const auto view = graph->find("view");
        QVERIFY(view.has_value());
        model.setNode(&*graph, *view);
        const QModelIndex users = section(model, "Users");
        QCOMPARE(model.rowCount(users), int(expectedUsers.size()));
        for (int i = 0; i < expectedUsers.size(); ++i) {
            QCOMPARE(key(model, users, i), expectedUsers[i]);
            QCOMPARE(
                QString::fromStdString(
                    graph->node(model.index(i, 0, users).data(InspectorModel::NodeRefRole).toUInt()).name),
                expectedUsers[i]);
        }
        model.setNode(&*graph, *addmm);

        // Tensor metadata from torch's own tensor_meta.
        const QJsonDocument meta = QJsonDocument::fromJson(
            QByteArray::fromStdString(readFile(sharedPath("graphs/torch-1.13/gpt_block2/joint.meta.json"))));
        QJsonObject expected;
        for (const QJsonValue& n : meta.object().value("nodes").toArray())
            if (n.toObject().value("name").toString() == "addmm")
                expected = n.toObject();
        QStringList shape, stride;
        for (const QJsonValue& d : expected.value("shape").toArray())
            shape << QString::number(d.toInteger());
        for (const QJsonValue& d : expected.value("stride").toArray())
            stride << QString::number(d.toInteger());
        const QModelIndex tensor = section(model, "Tensor");
        QCOMPARE(field(model, tensor, "shape"), "[" + shape.join(", ") + "]");
        QCOMPARE(field(model, tensor, "stride"), "(" + stride.join(", ") + ")");
        QCOMPARE(field(model, tensor, "dtype"), expected.value("dtype").toString());
    }

    // Every node of a real graph in turn, then cleared, under QAbstractItemModelTester: each reset leaves a
    // consistent tree whose Users section lists as many rows as the graph counts users of the node.
    void everyNodeOfARealGraph() {
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        InspectorModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        for (NodeId id = 0; id < g.size(); ++id) {
            model.setNode(&g, id);
            QCOMPARE(model.node(), id);
            const QModelIndex users = section(model, "Users");
            QCOMPARE(users.isValid() ? model.rowCount(users) : 0, int(g.node(id).users.size()));
        }
        model.setNode(&g, kNoNode);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(resets.count(), int(g.size()) + 1);
    }
};

QTEST_GUILESS_MAIN(TestInspectorModel)
#include "tst_model_inspector.moc"
