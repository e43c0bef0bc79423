// DocumentLoader: files read and parsed on a worker thread, a newer open superseding an older one, cancel,
// and errors that name file:line. Node counts come from torch's own reference.json (joint_nodes).
#include "testutil.h"

#include "io/TraceLog.h"
#include "models/DocumentLoader.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace jointscope;
using namespace jointscope::test;
using jointscope::views::DocumentLoader;
using jointscope::views::OpenedFile;

namespace {

size_t torchNodeCount(const char* model) {
    QFile file(q(sharedPath(std::string("graphs/torch-1.13/") + model + "/reference.json")));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    return size_t(
        QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("joint_nodes")).toInt());
}

QString jointPath(const char* model) {
    return q(sharedPath(std::string("graphs/torch-1.13/") + model + "/joint.txt"));
}

} // namespace

class TestDocumentLoader : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        qRegisterMetaType<std::shared_ptr<OpenedFile>>("std::shared_ptr<jointscope::views::OpenedFile>");
    }

    void readsOnAWorkerThread() {
        for (const char* model : {"mlp", "gpt_block2"}) {
            const size_t expected = torchNodeCount(model);
            QVERIFY(expected > 0);
            DocumentLoader loader;
            QSignalSpy loaded(&loader, &DocumentLoader::loaded);
            QSignalSpy failed(&loader, &DocumentLoader::failed);
            const quint64 ticket = loader.open(jointPath(model));
            // open() returns before the file is read: the UI thread is free meanwhile.
            QVERIFY(loader.busy());
            QCOMPARE(loader.path(), jointPath(model));
            QVERIFY(loaded.wait(60000));
            QCOMPARE(failed.count(), 0);
            QVERIFY(!loader.busy());
            QCOMPARE(loaded.at(0).at(0).toULongLong(), ticket);
            auto opened = loaded.at(0).at(1).value<std::shared_ptr<OpenedFile>>();
            QVERIFY(opened && opened->graph);
            QCOMPARE(opened->graph->size(), expected);
            QCOMPARE(opened->path, jointPath(model));
            QCOMPARE(opened->file.graphs().size(), size_t(1));
            // reference.json beside joint.txt was read too: torch's own saved values.
            QVERIFY(!opened->graph->decisions.empty());
        }
    }

    void newerOpenSupersedes() {
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy cancelled(&loader, &DocumentLoader::cancelled);
        const quint64 first = loader.open(jointPath("gpt_block2"));
        const quint64 second = loader.open(jointPath("mlp"));
        QVERIFY(second != first);
        // The older one is reported at once, so a listener never sees the loader idle in between.
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), first);
        QVERIFY(loader.busy());
        QVERIFY(loaded.wait(60000));
        loader.waitForDone(); // the superseded worker has returned too
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).toULongLong(), second);
        auto opened = loaded.at(0).at(1).value<std::shared_ptr<OpenedFile>>();
        QCOMPARE(opened->graph->size(), torchNodeCount("mlp"));
        QCOMPARE(cancelled.count(), 1);
    }

    void cancelDropsTheResult() {
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        QSignalSpy cancelled(&loader, &DocumentLoader::cancelled);
        const quint64 ticket = loader.open(jointPath("gpt_block2"));
        loader.cancel();
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), ticket);
        QVERIFY(!loader.busy());
        loader.waitForDone();
        QTest::qWait(50);
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(cancelled.count(), 1);
        loader.cancel(); // nothing running: nothing reported
        QCOMPARE(cancelled.count(), 1);
    }

    void bigLogIsIndexedWithProgress() {
        // 12 copies of a real 3.5 MB log: read in parts on several threads, the bar told how far.
        const std::string one = readFile(sharedPath("graphs/torch-trace/multi_rank_rank_1.log"));
        const size_t perCopy = indexTraceLog(one, "one.log").graphs.size();
        QVERIFY(perCopy > 0);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big.log"));
        {
            std::string text;
            for (int i = 0; i < 12; ++i)
                text += one;
            writeFile(path.toStdString(), text);
        }
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy progress(&loader, &DocumentLoader::progress);
        GraphList found; // what a list filling in while the index grows shows
        bool foundAfterLoaded = false;
        connect(&loader, &DocumentLoader::graphsFound, this,
                [&](quint64, std::shared_ptr<const GraphList> graphs) {
                    foundAfterLoaded = foundAfterLoaded || loaded.count() > 0;
                    found.append(*graphs);
                });
        loader.open(path);
        QVERIFY(loaded.wait(60000));
        auto opened = loaded.at(0).at(1).value<std::shared_ptr<OpenedFile>>();
        QCOMPARE(opened->file.graphs().size(), 12 * perCopy);
        QVERIFY(!foundAfterLoaded);
        QCOMPARE(found.size(), opened->file.graphs().size());
        for (size_t i = 0; i < found.size(); ++i) {
            QCOMPARE(found[i].index, opened->file.graphs()[i].index);
            QCOMPARE(found[i].line, opened->file.graphs()[i].line);
        }
        QVERIFY(opened->graph);
        double last = 0;
        int indexing = 0;
        for (const QList<QVariant>& signal : progress) {
            const QString step = signal.at(2).toString();
            if (!step.startsWith(QStringLiteral("indexing ")))
                continue;
            ++indexing;
            const double fraction = signal.at(1).toDouble();
            QVERIFY2(fraction >= last && fraction <= 1.0, qPrintable(step));
            last = fraction;
            QVERIFY2(step.endsWith(QStringLiteral(" graphs")) && step.contains(QStringLiteral(" MB")),
                     qPrintable(step));
        }
        QVERIFY(indexing > 0);
    }

    // "FILE#GRAPH", as the CLI takes it, loads that graph first; a graph the file does not hold is refused,
    // naming the file.
    void namedGraphIsLoadedFirst() {
        const std::string log = sourcePath("tests/data/torch2/hf_falcon_list_index_inductor_trace.log");
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        loader.open(QString::fromStdString(log + "#aot_forward_graph"));
        QVERIFY(loaded.wait(60000));
        auto opened = loaded.at(0).at(1).value<std::shared_ptr<OpenedFile>>();
        QCOMPARE(opened->path, QString::fromStdString(log));
        QCOMPARE(opened->file.graphs()[opened->index].kind, std::string("aot_forward_graph"));
        QVERIFY(opened->graph && opened->graph->size() > 100);
        loader.open(QString::fromStdString(log)); // without a name: the first graph (the dynamo graph)
        QVERIFY(loaded.wait(60000));
        opened = loaded.at(1).at(1).value<std::shared_ptr<OpenedFile>>();
        QCOMPARE(opened->file.graphs()[opened->index].kind, std::string("dynamo_output_graph"));
        loader.open(QString::fromStdString(log + "#aot_joint_graph@9/9"));
        QVERIFY(failed.wait(60000));
        const auto error = failed.at(0).at(1).value<Diagnostic>();
        QCOMPARE(error.loc.file, log);
        QVERIFY2(error.message.find("no graph 'aot_joint_graph@9/9'") != std::string::npos,
                 error.message.c_str());
    }

    void errorsNameFileAndLine() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // The mlp joint graph with a stray character where its 7th line starts a name.
        QFile source(jointPath("mlp"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QList<QByteArray> lines = source.readAll().split('\n');
        QVERIFY(lines.size() > 10);
        QVERIFY(lines[6].contains("addmm = torch.ops.aten.addmm.default(primals_2, primals_5, t)"));
        lines[6] = "        $addmm = torch.ops.aten.addmm.default(primals_2, primals_5, t)";
        const QString broken = dir.filePath(QStringLiteral("broken.txt"));
        QFile out(broken);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(lines.join('\n'));
        out.close();

        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        loader.open(broken);
        QVERIFY(loaded.wait(60000));
        auto opened = loaded.at(0).at(1).value<std::shared_ptr<OpenedFile>>();
        // Listed, but its graph does not parse: the diagnostic points at the line.
        QVERIFY(!opened->graph);
        QVERIFY(opened->problem);
        QCOMPARE(opened->problem->loc.line, 7u);
        QVERIFY2(QString::fromStdString(opened->problem->format()).contains(QStringLiteral("broken.txt:7:")),
                 opened->problem->format().c_str());

        // A paste whose first graph does not read opens on the next one that does
        // (tests/data/logs/broken.log: a damaged forward, then a good backward).
        loader.open(q(sourcePath("tests/data/logs/broken.log")));
        QVERIFY(loaded.wait(60000));
        auto paste = loaded.last().at(1).value<std::shared_ptr<OpenedFile>>();
        QVERIFY(paste && paste->file.graphs().size() == 2);
        QVERIFY(paste->file.graphs()[0].failed());
        QCOMPARE(paste->index, size_t(1));
        QVERIFY(paste->graph);
        QCOMPARE(uint64_t(paste->graph->size()), countAotNodes(paste->file.graphs()[1].payload));
        QVERIFY(!paste->problem);

        // A file that is not there fails with its name.
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        const QString missing = dir.filePath(QStringLiteral("missing.txt"));
        loader.open(missing);
        QVERIFY(failed.wait(60000));
        const auto error = failed.at(0).at(1).value<Diagnostic>();
        QVERIFY2(QString::fromStdString(error.format()).contains(QStringLiteral("missing.txt")),
                 error.format().c_str());
    }
};

QTEST_MAIN(TestDocumentLoader)
#include "tst_model_documentloader.moc"
