// GraphListModel: graphs of a multi-graph file grouped by compile id, in order of first appearance.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/GraphListModel.h"

#include <QAbstractItemModelTester>

#include <set>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

GraphEntry entry(uint32_t index, std::string compileId, std::string kind, uint64_t nodes) {
    GraphEntry e;
    e.index = index;
    e.compileId = std::move(compileId);
    e.kind = std::move(kind);
    e.title = "[" + e.compileId + "] " + e.kind;
    e.nodes = nodes;
    e.line = 10 + index;
    return e;
}

} // namespace

class TestGraphListModel : public QObject {
    Q_OBJECT
private slots:
    void groupsByCompileId() {
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries({entry(0, "0/0", "dynamo_output_graph", 12), entry(1, "0/0", "aot_joint_graph", 40),
                          entry(2, "1/0", "dynamo_output_graph", 7), entry(3, "", "fx", 3),
                          entry(4, "0/0", "aot_backward_graph", 20)});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.groupCount(), 3);
        const QModelIndex first = model.index(0, 0);
        QCOMPARE(first.data().toString(), QStringLiteral("compile 0/0"));
        QCOMPARE(model.rowCount(first), 3);
        QCOMPARE(model.index(2, GraphListModel::KindColumn, first).data().toString(), QStringLiteral("aot_backward_graph"));
        QCOMPARE(model.index(2, 0, first).data(GraphListModel::EntryIndexRole).toUInt(), 4u);
        QCOMPARE(model.index(1, GraphListModel::NodesColumn, first).data().toULongLong(), 40ull);
        QCOMPARE(model.index(2, 0).data().toString(), QStringLiteral("(no compile id)"));
        QVERIFY(!first.data(GraphListModel::EntryIndexRole).isValid());
        QCOMPARE(model.parent(model.index(0, 0, first)), first);
        QCOMPARE(model.parent(first), QModelIndex());
        const QModelIndex third = model.indexOfEntry(3);
        QCOMPARE(third.parent().row(), 2);
        QCOMPARE(third.data(GraphListModel::EntryIndexRole).toUInt(), 3u);
        QVERIFY(!model.indexOfEntry(99).isValid());
        QCOMPARE(model.rowCount(model.index(0, 0, first)), 0); // graph rows have no children
    }

    void realTraceLog() {
        auto file = GraphFile::open(sharedPath("graphs/torch-trace/multi_rank_rank_1.log"));
        JS_VERIFY_EXPECTED(file);
        QVERIFY(file->graphs().size() >= 2);
        std::set<std::string> compileIds;
        for (const GraphEntry& e : file->graphs())
            compileIds.insert(e.compileId);
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries(file->graphs());
        QCOMPARE(size_t(model.rowCount()), compileIds.size());
        // Every entry exactly once, under the group of its compile id.
        std::set<uint32_t> seen;
        for (int g = 0; g < model.rowCount(); ++g) {
            const QModelIndex group = model.index(g, 0);
            for (int r = 0; r < model.rowCount(group); ++r) {
                const uint32_t index = model.index(r, 0, group).data(GraphListModel::EntryIndexRole).toUInt();
                QVERIFY(seen.insert(index).second);
                const GraphEntry& e = file->graphs()[index];
                QCOMPARE(group.data().toString(), e.compileId.empty() ? QStringLiteral("(no compile id)")
                                                                      : QStringLiteral("compile ") + q(e.compileId));
            }
        }
        QCOMPARE(seen.size(), file->graphs().size());
    }

    // The Graphs dock's model as files are opened one after another, then closed, under
    // QAbstractItemModelTester: each reset shows one group per distinct compile id of the new file.
    void resetsAcrossRealFiles() {
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        for (const char* log : {"multi_rank_rank_1.log", "simple.log", "artifacts.log", "multi_rank_rank_1.log"}) {
            auto file = GraphFile::open(sharedPath(std::string("graphs/torch-trace/") + log));
            JS_VERIFY_EXPECTED(file);
            std::set<std::string> compileIds;
            for (const GraphEntry& e : file->graphs())
                compileIds.insert(e.compileId);
            model.setEntries(file->graphs());
            QCOMPARE(size_t(model.rowCount()), compileIds.size());
            QCOMPARE(model.entryCount(), file->graphs().size());
        }
        model.setEntries({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestGraphListModel)
#include "tst_model_graphlist.moc"
