// GraphTitlesModel: one row per graph of the shared list, titled as the picker shows it, built when read.
#include "io/GraphFile.h"
#include "models/GraphTitlesModel.h"
#include "testutil.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>

using namespace jointscope;
using namespace jointscope::views;

class TestGraphTitlesModel : public QObject {
    Q_OBJECT
private slots:
    void listsEveryGraphOfALog() {
        const std::string path = test::sharedPath("graphs/torch-trace/multi_rank_rank_1.log");
        auto file = std::make_shared<GraphFile>(GraphFile::open(path).take());
        GraphTitlesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setEntries(std::shared_ptr<const GraphList>(file, &file->graphs()));
        QCOMPARE(reset.count(), 1);
        // The rows are the log's graph records, counted apart from the index (one per graph record kind).
        const std::string text = test::readFile(path);
        int records = 0;
        for (const char* kind : {"\"dynamo_output_graph\"", "\"aot_inference_graph\"", "\"inductor_post_grad_graph\""})
            for (size_t at = text.find(kind); at != std::string::npos; at = text.find(kind, at + 1))
                ++records;
        QVERIFY(records > 0);
        QVERIFY(model.rowCount() >= records);
        QCOMPARE(size_t(model.rowCount()), file->graphs().size());
        for (int row = 0; row < model.rowCount(); ++row) {
            const GraphEntry e = file->graphs()[size_t(row)];
            QCOMPARE(model.index(row).data().toString(),
                     QString::number(row) + ": [" + QString::fromStdString(e.compileId) + "] " +
                         QString::fromStdString(e.kind));
        }
        QCOMPARE(model.rowCount(model.index(0)), 0); // a flat list
        QVERIFY(!model.index(0).data(Qt::DecorationRole).isValid());
    }

    void prefixesAnotherFile() {
        GraphEntry a;
        a.kind = "aot_joint_graph";
        a.compileId = "2/1";
        auto list = std::make_shared<const GraphList>(GraphList{a});
        GraphTitlesModel model;
        model.setEntries(list, "b.log · ");
        QCOMPARE(model.index(0).data().toString(), QString("b.log · 0: [2/1] aot_joint_graph"));
        model.setEntries(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestGraphTitlesModel)
#include "tst_model_graphtitles.moc"
