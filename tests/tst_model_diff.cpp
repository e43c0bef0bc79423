// DiffModel: the differences of two real graphs (rank 0 and rank 1 of tests/data/multirank, compile 1/0,
// where rank 1 adds tanh, *2 and a second all_reduce + wait) as rows to step through.
#include "testutil.h"

#include "graph/GraphDiff.h"
#include "io/GraphFile.h"
#include "models/DiffModel.h"

#include <QAbstractItemModelTester>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

class TestDiffModel : public QObject {
    Q_OBJECT
private slots:
    void rowsFollowTheDiff() {
        auto folder = GraphFile::open(sourcePath("tests/data/multirank"));
        QVERIFY(folder);
        auto load = [&](const char* spec) {
            auto g = folder->load(*folder->select(spec));
            if (!g)
                qFatal("%s", g.error().format().c_str());
            return std::make_shared<const Graph>(g.take());
        };
        auto a = load("rank0:aot_inference_graph@1/0");
        auto b = load("rank1:aot_inference_graph@1/0");
        auto diff = std::make_shared<const GraphDiff>(diffGraphs(*a, *b));

        DiffModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setDiff(a, b, diff);
        QCOMPARE(model.rowCount(), int(diff->entries.size() + diff->edges.size()));
        QCOMPARE(model.columnCount(), int(DiffModel::ColumnCount));
        int added = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex kind = model.index(row, DiffModel::KindColumn);
            const QString k = kind.data(DiffModel::KindRole).toString();
            if (k == QLatin1String("added")) {
                ++added;
                QVERIFY(!kind.data(DiffModel::NodeARole).isValid());
                const NodeId id = NodeId(kind.data(DiffModel::NodeBRole).toUInt());
                QCOMPARE(model.index(row, DiffModel::NodeBColumn).data().toString(),
                         QString::fromStdString(b->node(id).name));
                QCOMPARE(kind.data(Qt::ForegroundRole).value<QColor>(),
                         DiffModel::kindColor(DiffKind::Added));
            }
            if (k.startsWith(QLatin1String("edge"))) // an edge row points at its consumer in both graphs
                QVERIFY(kind.data(DiffModel::NodeARole).isValid() ||
                        kind.data(DiffModel::NodeBRole).isValid());
        }
        QCOMPARE(added, 4); // tanh, mul, all_reduce_1, wait_tensor_1
        // The changed all_reduce reads mul instead of addmm_1.
        bool sawArgs = false;
        for (int row = 0; row < model.rowCount(); ++row)
            if (model.index(row, DiffModel::NodeAColumn).data().toString() == QLatin1String("all_reduce") &&
                model.index(row, 0).data(DiffModel::KindRole).toString() == QLatin1String("changed")) {
                QVERIFY(model.index(row, DiffModel::DetailColumn)
                            .data()
                            .toString()
                            .contains(QStringLiteral("mul")));
                sawArgs = true;
            }
        QVERIFY(sawArgs);
        model.setDiff(nullptr, nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestDiffModel)
#include "tst_model_diff.moc"
