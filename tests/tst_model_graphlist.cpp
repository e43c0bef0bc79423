// GraphListModel: graphs of a multi-graph file grouped by compile id, in order of first appearance.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/GraphListModel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>

#include <map>
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
        QCOMPARE(model.index(2, GraphListModel::KindColumn, first).data().toString(),
                 QStringLiteral("backward"));
        QCOMPARE(model.index(0, GraphListModel::KindColumn, first).data().toString(),
                 QStringLiteral("dynamo graph"));
        QCOMPARE(model.index(1, GraphListModel::NodesColumn).data().toString(), QStringLiteral("1 graph(s)"));
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

    // A real compiled-autograd paste (tests/data/logs/capture_pastes.py): Kind in torch's words and Nodes
    // equal to torch's len(gm.graph.nodes) of each logged graph (*.nodes.json), the user's script not listed.
    void realPasteKindsAndNodes() {
        const std::string path = sourcePath("tests/data/logs/compiled_autograd_graph_break.log");
        auto file = GraphFile::open(path);
        JS_VERIFY_EXPECTED(file);
        const QJsonArray torch =
            QJsonDocument::fromJson(QByteArray::fromStdString(readFile(sourcePath(
                                        "tests/data/logs/compiled_autograd_graph_break.nodes.json"))))
                .array();
        QCOMPARE(qsizetype(file->graphs().size()), torch.size());
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries(file->graphs());
        // Kinds from the headers torch printed: __compiled_fn_* (dynamo), Forward/Backward graph N, Compiled
        // autograd graph.
        auto kindOfHeader = [](const QString& header) {
            if (header.startsWith(QStringLiteral("__compiled_fn")))
                return QStringLiteral("dynamo graph");
            if (header.startsWith(QStringLiteral("Forward graph")))
                return QStringLiteral("forward");
            if (header.startsWith(QStringLiteral("Backward graph")))
                return QStringLiteral("backward");
            return header == QStringLiteral("Compiled autograd graph") ? QStringLiteral("compiled autograd")
                                                                       : QStringLiteral("?");
        };
        int compiledAutograd = 0;
        for (qsizetype i = 0; i < torch.size(); ++i) {
            const QModelIndex title = model.indexOfEntry(uint32_t(i));
            QVERIFY(title.isValid());
            const QModelIndex kind = title.siblingAtColumn(GraphListModel::KindColumn);
            const QModelIndex nodes = title.siblingAtColumn(GraphListModel::NodesColumn);
            const QJsonObject logged = torch[i].toObject();
            QCOMPARE(kind.data().toString(), kindOfHeader(logged["header"].toString()));
            QCOMPARE(nodes.data().toULongLong(), qulonglong(logged["nodes"].toInteger()));
            QVERIFY(!title.data(GraphListModel::ErrorRole).isValid());
            QVERIFY(!title.data(Qt::ForegroundRole).isValid());
            compiledAutograd += kind.data().toString() == QStringLiteral("compiled autograd");
        }
        QCOMPARE(compiledAutograd, 1);
        QCOMPARE(model.headerData(GraphListModel::KindColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Kind"));
        QCOMPARE(model.headerData(GraphListModel::NodesColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Nodes"));
    }

    // A graph that does not read stays in the picker, marked failed, its located message in the tooltip.
    void failedGraphsAreMarked() {
        const std::string path = sourcePath("tests/data/logs/broken.log");
        auto file = GraphFile::open(path);
        JS_VERIFY_EXPECTED(file);
        QCOMPARE(file->graphs().size(), size_t(2)); // the damaged forward, then a good backward
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries(file->graphs());
        const QModelIndex failed = model.indexOfEntry(0);
        QCOMPARE(failed.siblingAtColumn(GraphListModel::KindColumn).data().toString(),
                 QStringLiteral("failed"));
        QVERIFY(!failed.siblingAtColumn(GraphListModel::NodesColumn).data().isValid());
        const QString error = failed.data(GraphListModel::ErrorRole).toString();
        QVERIFY2(error.startsWith(q(path) + QStringLiteral(":")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral(": error: ")), qPrintable(error));
        QVERIFY(failed.data(Qt::ToolTipRole).toString().contains(error));
        QVERIFY(failed.data(Qt::ForegroundRole).isValid());
        const QModelIndex good = model.indexOfEntry(1);
        QCOMPARE(good.siblingAtColumn(GraphListModel::KindColumn).data().toString(),
                 QStringLiteral("backward"));
        QVERIFY(!good.data(GraphListModel::ErrorRole).isValid());
        QCOMPARE(failed.parent().siblingAtColumn(GraphListModel::NodesColumn).data().toString(),
                 failed.parent() == good.parent() ? QStringLiteral("2 graph(s), 1 failed")
                                                  : QStringLiteral("1 graph(s), 1 failed"));
    }

    // A log's index parses nothing: the count (or the failure) arrives when the graph is loaded.
    // The model shares the file's list (a log of 200k graphs is not copied): what loading finds is kept
    // beside it, the file's entries stay as read.
    void loadedGraphFillsItsRow() {
        auto opened = GraphFile::open(sharedPath("graphs/torch-trace/multi_rank_rank_1.log"));
        JS_VERIFY_EXPECTED(opened);
        const auto file = std::make_shared<const GraphFile>(opened.take());
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries(std::shared_ptr<const GraphList>(file, &file->graphs()));
        QCOMPARE(file.use_count(), 2);
        const QModelIndex row = model.indexOfEntry(1);
        QVERIFY(!row.siblingAtColumn(GraphListModel::NodesColumn).data().isValid());
        Expected<Graph> graph = file->load(1);
        JS_VERIFY_EXPECTED(graph);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setLoaded(1, graph->size());
        QCOMPARE(row.siblingAtColumn(GraphListModel::NodesColumn).data().toULongLong(),
                 qulonglong(graph->size()));
        QCOMPARE(changed.count(), 2); // the row and its group
        const QModelIndex other = model.indexOfEntry(2);
        const std::string error = file->fileName() + ":9:3: error: expected ')'";
        model.setLoaded(2, 0, error);
        QCOMPARE(other.siblingAtColumn(GraphListModel::KindColumn).data().toString(),
                 QStringLiteral("failed"));
        QCOMPARE(other.data(GraphListModel::ErrorRole).toString(), q(error));
        QVERIFY(other.parent()
                    .siblingAtColumn(GraphListModel::NodesColumn)
                    .data()
                    .toString()
                    .endsWith(QStringLiteral(", 1 failed")));
        model.setLoaded(9999, 5); // no such entry: nothing changes
        QCOMPARE(changed.count(), 4);
        QCOMPARE(file->graphs()[1].nodes, uint64_t(0)); // an index parses nothing; the file's list is as read
        QVERIFY(!file->graphs()[2].failed());
        // The same list again keeps what was loaded; another list forgets it.
        model.setEntries(std::shared_ptr<const GraphList>(file, &file->graphs()));
        QCOMPARE(model.indexOfEntry(1).siblingAtColumn(GraphListModel::NodesColumn).data().toULongLong(),
                 qulonglong(graph->size()));
        model.setEntries(file->graphs());
        QVERIFY(!model.indexOfEntry(1).siblingAtColumn(GraphListModel::NodesColumn).data().isValid());
        QCOMPARE(file.use_count(), 1);
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
                QCOMPARE(group.data().toString(), e.compileId.empty()
                                                      ? QStringLiteral("(no compile id)")
                                                      : QStringLiteral("compile ") + q(e.compileId));
            }
        }
        QCOMPARE(seen.size(), file->graphs().size());
    }

    // The list a log's index fills in: the model shown the same list again after it grew places the new
    // entries, those of a compile already listed under its group.
    void sameListGrown() {
        auto file = GraphFile::open(sharedPath("graphs/torch-trace/multi_rank_rank_1.log"));
        JS_VERIFY_EXPECTED(file);
        const GraphList& all = file->graphs();
        QVERIFY(all.size() >= 10);
        auto growing = std::make_shared<GraphList>();
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        for (size_t from = 0; from < all.size(); from += 7) {
            growing->append(all, from, from + 7); // a batch ends inside a compile now and then
            model.setEntries(std::shared_ptr<const GraphList>(growing));
        }
        // Expected: the compile ids in order of first appearance, each with its entries in file order.
        std::vector<std::string> order;
        std::map<std::string, std::vector<uint32_t>> members;
        for (const GraphEntry& e : all) {
            if (!members.count(e.compileId))
                order.push_back(e.compileId);
            members[e.compileId].push_back(e.index);
        }
        QCOMPARE(size_t(model.rowCount()), order.size());
        QCOMPARE(model.entryCount(), all.size());
        for (int g = 0; g < model.rowCount(); ++g) {
            const QModelIndex group = model.index(g, 0);
            const std::vector<uint32_t>& expected = members[order[size_t(g)]];
            QCOMPARE(size_t(model.rowCount(group)), expected.size());
            for (int r = 0; r < model.rowCount(group); ++r)
                QCOMPARE(model.index(r, 0, group).data(GraphListModel::EntryIndexRole).toUInt(),
                         expected[size_t(r)]);
        }
        QCOMPARE(model.indexOfEntry(uint32_t(all.size() - 1)).data(GraphListModel::EntryIndexRole).toUInt(),
                 uint32_t(all.size() - 1));
    }

    // The Graphs dock's model as files are opened one after another, then closed, under
    // QAbstractItemModelTester: each reset shows one group per distinct compile id of the new file.
    void resetsAcrossRealFiles() {
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        for (const char* log :
             {"multi_rank_rank_1.log", "simple.log", "artifacts.log", "multi_rank_rank_1.log"}) {
            auto file = GraphFile::open(sharedPath(std::string("graphs/torch-trace/") + log));
            JS_VERIFY_EXPECTED(file);
            std::set<std::string> compileIds;
            for (const GraphEntry& e : file->graphs())
                compileIds.insert(e.compileId);
            model.setEntries(file->graphs());
            QCOMPARE(size_t(model.rowCount()), compileIds.size());
            QCOMPARE(model.entryCount(), file->graphs().size());
        }
        model.setEntries(GraphList{});
        QCOMPARE(model.rowCount(), 0);
    }

    // A folder of per-rank logs (tests/data/multirank): a Rank column, each compile's group holding the
    // graphs of both ranks; a log whose records name no rank has no Rank column.
    void rankColumnForRankFolders() {
        GraphListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto single = GraphFile::open(sharedPath("graphs/torch-trace/multi_rank_rank_1.log"));
        QVERIFY(single);
        model.setEntries(single->graphs());
        QCOMPARE(model.columnCount(), int(GraphListModel::RankColumn));
        auto folder = GraphFile::open(sourcePath("tests/data/multirank"));
        QVERIFY(folder);
        model.setEntries(folder->graphs());
        QCOMPARE(model.columnCount(), int(GraphListModel::ColumnCount));
        QCOMPARE(model.headerData(GraphListModel::RankColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Rank"));
        // Two compiles (0/0 and 1/0), each listing the graphs of rank 0 then rank 1.
        QCOMPARE(model.rowCount(), 2);
        std::set<int> ranks;
        const QModelIndex group = model.index(1, 0);
        QCOMPARE(group.data().toString(), QStringLiteral("compile 1/0"));
        for (int row = 0; row < model.rowCount(group); ++row) {
            const uint entry = model.index(row, 0, group).data(GraphListModel::EntryIndexRole).toUInt();
            const int rank = model.index(row, GraphListModel::RankColumn, group).data().toInt();
            QCOMPARE(rank, folder->graphs()[entry].rank);
            ranks.insert(rank);
        }
        QCOMPARE(ranks, (std::set<int>{0, 1}));
    }
};

QTEST_GUILESS_MAIN(TestGraphListModel)
#include "tst_model_graphlist.moc"
