// CliJob runs the real jointscope-cli as a child process: validate and profile succeed on a torch 1.13 graph,
// profile progress reaches its end, cancel kills and reaps the child, and failures become readable errors.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/CliJob.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cerrno>
#include <csignal>
#include <regex>
#include <set>

#include <sys/types.h>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

const QString kMlp = QString::fromStdString(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
const QString kGpt = QString::fromStdString(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));

// Counted from the FX text itself: `name = torch.ops.aten...(` and `name = tuple[i]` lines are call_function
// nodes; placeholders are the names unpacked from fx_pytree.tree_flatten_spec.
struct FxCounts {
    std::set<std::string> callFunctions;
    size_t placeholders = 0;
};

FxCounts countFx(const std::string& path) {
    FxCounts counts;
    static const std::regex call(R"(^\s+(\w+) = (torch\.ops\.|\w+\[\d+\]))");
    static const std::regex unpack(R"(^\s+(.*) = fx_pytree\.tree_flatten_spec)");
    for (const std::string& line : splitLines(readFile(path))) {
        std::smatch m;
        if (std::regex_search(line, m, call))
            counts.callFunctions.insert(m[1]);
        else if (std::regex_search(line, m, unpack))
            for (char c : m[1].str())
                counts.placeholders += c == ',';
    }
    return counts;
}

bool reaped(qint64 pid) {
    // A zombie still answers kill(pid, 0); only a child that is gone and collected gives ESRCH.
    return pid > 0 && ::kill(pid_t(pid), 0) == -1 && errno == ESRCH;
}

// A job on `cli` (the real jointscope-cli unless told) with a spy on its end, and the request it runs.
struct JobFixture {
    CliJob job;
    QSignalSpy finished{&job, &CliJob::finished};
    CliRequest request;

    JobFixture(CliRequest::Kind kind, const QString& file, const QString& cli = test::cliPath()) {
        job.setCliPath(cli);
        request.kind = kind;
        request.file = file;
    }
    // Starts the request and waits for its end; false when it did not start or did not end in time.
    bool run(int msecs) { return job.start(request) && finished.wait(msecs); }
};

} // namespace

class TestCliJob : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY2(QFileInfo(test::cliPath()).isExecutable(), qPrintable(test::cliPath()));
        QVERIFY(QFileInfo::exists(kMlp));
        QVERIFY(QFileInfo::exists(kGpt));
    }

    void argumentsCarryEveryOption() {
        CliRequest r;
        r.kind = CliRequest::Kind::Profile;
        r.file = QStringLiteral("g.log");
        r.graph = QStringLiteral("2");
        r.device = QStringLiteral("cuda:1");
        r.reps = 7;
        r.db = QStringLiteral("p.sqlite");
        QCOMPARE(r.arguments(), QStringList({"profile", "g.log", "--json", "--graph", "2", "--device",
                                             "cuda:1", "--progress", "--reps", "7", "--db", "p.sqlite"}));
        r.kind = CliRequest::Kind::Validate;
        r.partition = QStringLiteral("d.json");
        QCOMPARE(r.arguments(), QStringList({"validate", "g.log", "--json", "--graph", "2", "--device",
                                             "cuda:1", "--partition", "d.json"}));
    }

    // The Runtime dock's device list: `devices --json` of this machine (CPU only unless a GPU is exposed).
    void devicesListsThisMachine() {
        JobFixture f(CliRequest::Kind::Devices, QString());
        QCOMPARE(f.request.arguments(), (QStringList{"devices", "--json"}));
        QVERIFY(f.run(60000));
        QVERIFY2(f.job.state() == CliJob::State::Succeeded, qPrintable(f.job.error()));
        QStringList specs;
        for (const CliDevice& d : parseDeviceList(f.job.result())) {
            specs << d.spec;
            QVERIFY(!d.name.isEmpty());
        }
        QCOMPARE(specs, expectedDeviceSpecs());
    }

    void deviceListOfAGpuMachine() {
        // What `jointscope-cli devices --json` prints with two GPUs (fields the list does not read left out).
        const QJsonObject json = QJsonDocument::fromJson(R"({"devices": [
            {"kind": "cpu", "index": 0, "name": "AMD EPYC", "cores": 16},
            {"kind": "cuda", "index": 0, "name": "NVIDIA H100 80GB HBM3", "sms": 132},
            {"kind": "cuda", "index": 1, "name": "NVIDIA H100 80GB HBM3", "sms": 132},
            {"index": 2}]})")
                                     .object();
        const std::vector<CliDevice> devices = parseDeviceList(json);
        QCOMPARE(devices.size(), size_t(3));
        QCOMPARE(devices[0].spec, QStringLiteral("cpu"));
        QCOMPARE(devices[1].spec, QStringLiteral("cuda:0"));
        QCOMPARE(devices[2].spec, QStringLiteral("cuda:1"));
        QCOMPARE(devices[2].name, QStringLiteral("NVIDIA H100 80GB HBM3"));
        QVERIFY(parseDeviceList(QJsonObject{}).empty());
    }

    void validateSucceeds() {
        JobFixture f(CliRequest::Kind::Validate, kMlp);
        CliJob& job = f.job;
        QVERIFY(job.start(f.request));
        QVERIFY(job.running());
        QVERIFY(f.finished.wait(120000));
        QCOMPARE(job.state(), CliJob::State::Succeeded);
        QVERIFY2(job.error().isEmpty(), qPrintable(job.error()));
        QCOMPARE(job.result().value("ok").toBool(), true);
        // mlp's joint graph returns 6 values (one forward output, five gradients): see its `return` line.
        QCOMPARE(job.result().value("outputs").toArray().size(), 6);
        QVERIFY(reaped(job.processId()));
    }

    void profileProgressReachesTheEnd() {
        const FxCounts fx = countFx(kGpt.toStdString());
        QCOMPARE(fx.placeholders, size_t(26)); // primals_1..25, tangents_1
        QTemporaryDir dir;
        JobFixture f(CliRequest::Kind::Profile, kGpt);
        CliJob& job = f.job;
        QSignalSpy progress(&job, &CliJob::progress);
        f.request.reps = 1;
        f.request.db = dir.filePath(QStringLiteral("profiles.sqlite"));
        QVERIFY(f.run(300000));
        QVERIFY2(job.state() == CliJob::State::Succeeded, qPrintable(job.error()));

        const int total = int(fx.placeholders + fx.callFunctions.size() + 1); // + output
        QVERIFY(progress.size() > 10);
        int last = -1;
        for (const QList<QVariant>& p : progress) {
            QVERIFY(p[0].toInt() >= last);
            last = p[0].toInt();
            QCOMPARE(p[1].toInt(), total);
        }
        QCOMPARE(last, total);
        QCOMPARE(job.progressValue(), job.progressMaximum());

        size_t seen = 0;
        for (const QJsonValue& v : job.result().value("nodes").toArray()) {
            const QJsonObject n = v.toObject();
            if (!fx.callFunctions.count(n.value("name").toString().toStdString()))
                continue;
            ++seen;
            const bool timed = n.value("time_us").isDouble() && n.value("time_us").toDouble() > 0;
            const bool reason = !n.value("skipped").toString().isEmpty();
            QVERIFY2(timed != reason, qPrintable(n.value("name").toString()));
        }
        QCOMPARE(seen, fx.callFunctions.size());
    }

    // A TORCH_TRACE log holds several graphs: the job names the entry with --graph, as the GUI does.
    void graphOfAMultiGraphLog() {
        const QString log = QString::fromStdString(sharedPath("graphs/torch-trace/simple.log"));
        Expected<GraphFile> file = GraphFile::open(log.toStdString());
        QVERIFY(file);
        QCOMPARE(file->graphs().size(), size_t(3));
        Expected<Graph> inference = file->load(1);
        QVERIFY(inference);

        JobFixture f(CliRequest::Kind::Profile, log);
        CliJob& job = f.job;
        f.request.reps = 1;
        f.request.noDb = true;
        QVERIFY(f.run(60000)); // no --graph: the CLI refuses, and says how to choose
        QCOMPARE(job.state(), CliJob::State::Failed);
        QVERIFY2(job.error().contains(QStringLiteral("--graph")), qPrintable(job.error()));

        f.request.graph = QStringLiteral("1");
        QVERIFY(f.run(120000));
        QVERIFY2(job.state() == CliJob::State::Succeeded, qPrintable(job.error()));
        const QJsonArray nodes = job.result().value("nodes").toArray();
        QCOMPARE(size_t(nodes.size()), inference->size());
        for (size_t i = 0; i < inference->size(); ++i)
            QCOMPARE(nodes[qsizetype(i)].toObject().value("name").toString().toStdString(),
                     inference->node(NodeId(i)).name);
    }

    void cancelKillsAndReapsTheChild() {
        JobFixture f(CliRequest::Kind::Profile, kGpt);
        CliJob& job = f.job;
        QSignalSpy& finished = f.finished;
        QSignalSpy progress(&job, &CliJob::progress);
        f.request.reps = 100000;
        f.request.noDb = true;
        QVERIFY(job.start(f.request));
        const qint64 pid = job.processId();
        QVERIFY(pid > 0);
        QVERIFY(progress.wait(60000)); // it has loaded the graph and started timing
        QElapsedTimer timer;
        timer.start();
        job.cancel();
        QVERIFY(finished.size() == 1 || finished.wait(5000));
        QVERIFY2(timer.elapsed() < 3000, qPrintable(QString::number(timer.elapsed())));
        QCOMPARE(job.state(), CliJob::State::Cancelled);
        QCOMPARE(CliJob::stateName(job.state()), QStringLiteral("cancelled"));
        // Asked to stop (SIGTERM), the child prints what it measured before the op it was timing ended,
        // marked cancelled; one killed after CliJob::kStopGraceMs leaves no result.
        if (!job.result().isEmpty()) {
            QVERIFY(job.result().value("cancelled").toBool());
            QVERIFY(job.result().value("nodes").toArray().size() < 311); // gpt_block2's 311 nodes
        }
        QVERIFY2(reaped(pid), "the cancelled child is still there (zombie or alive)");
    }

    void missingFileIsNamed() {
        JobFixture f(CliRequest::Kind::Validate, QStringLiteral("/nonexistent/dir/no_such_graph.txt"));
        CliJob& job = f.job;
        QVERIFY(f.run(60000));
        QCOMPARE(job.state(), CliJob::State::Failed);
        QVERIFY2(job.error().contains(QStringLiteral("no_such_graph.txt")), qPrintable(job.error()));
        QVERIFY(job.exitCode() != 0);
    }

    void crashOfTheChildIsAnError() {
        // A stand-in CLI that dies from SIGSEGV after writing to stderr, as a crashing kernel would.
        QTemporaryDir dir;
        const QString fake = dir.filePath(QStringLiteral("jointscope-cli"));
        QFile script(fake);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\necho 'aten::mm: kernel exploded' >&2\nkill -SEGV $$\n");
        script.close();
        script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        JobFixture f(CliRequest::Kind::Profile, kMlp, fake);
        CliJob& job = f.job;
        QVERIFY(f.run(30000));
        QCOMPARE(job.state(), CliJob::State::Failed);
        QVERIFY2(job.error().contains(QStringLiteral("crashed")), qPrintable(job.error()));
        QVERIFY2(job.error().contains(QStringLiteral("kernel exploded")), qPrintable(job.error()));
    }

    void missingCliIsNamed() {
        JobFixture f(CliRequest::Kind::Profile, kMlp, QStringLiteral("/nonexistent/bin/jointscope-cli"));
        CliJob& job = f.job;
        QVERIFY(!job.start(f.request));
        QCOMPARE(job.state(), CliJob::State::Failed);
        QVERIFY2(job.error().contains(QStringLiteral("/nonexistent/bin/jointscope-cli")),
                 qPrintable(job.error()));
    }
};

QTEST_GUILESS_MAIN(TestCliJob)
#include "tst_gui_clijob.moc"
