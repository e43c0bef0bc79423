// The runtime's guards against hostile graph files (docs/runtime.md, "Safety"): the op allowlist, the
// Landlock sandbox, integer and size checks, and LibTorch errors as one located line.
//
// Expected outcomes come from the files on disk (compared byte for byte before and after), from the line
// numbers of the graph texts written here, from errno values the kernel gives, and from the documented exit
// codes; never from the runtime's own output alone.
// LibTorch before Qt: Qt's `slots` macro would rewrite LibTorch's IValue::slots().
#include "graph/SymbolicExpr.h"
#include "runtime/Interpreter.h"
#include "runtime/Sandbox.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include "testutil.h"

#include <QDir>
#include <QDirIterator>
#include <QProcess>
#include <QTemporaryDir>

#include <cerrno>
#include <cstddef>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace jointscope;
using namespace jointscope::test;

namespace {

// Every file under dir, by relative path: name and bytes. Equal snapshots mean nothing was created, removed,
// grown or rewritten.
std::map<QString, QByteArray> snapshot(const QString& dir) {
    std::map<QString, QByteArray> files;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        files[QDir(dir).relativeFilePath(path)] = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("?");
    }
    return files;
}

void writeText(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
    for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
        text.replace(pos, from.size(), to);
    return text;
}

// The 1-based line of the first line of text containing `needle`.
int lineOf(const std::string& text, const std::string& needle) {
    const std::vector<std::string> lines = splitLines(text);
    for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i].find(needle) != std::string::npos)
            return static_cast<int>(i) + 1;
    qFatal("'%s' is not in the graph text", needle.c_str());
}

size_t lineCount(const std::string& text) {
    size_t n = 0;
    for (const std::string& line : splitLines(text))
        n += !line.empty();
    return n;
}

constexpr const char* kHeader = "class GraphModule(torch.nn.Module):\n"
                                "    def forward(self, primals_1: \"f32[8]\"):\n";

// Graphs that try to change files in VICTIMS (replaced by the directory the test watches). The node that
// touches a file is named `bad`; its op is given beside each.
struct Trick {
    const char* name;
    const char* op; // the refused node's target as the message prints it
    const char* reason;
    std::string body; // lines after kHeader
};

std::vector<Trick> tricks() {
    const std::string ret = "        relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
                            "        return (relu, bad)\n";
    return {
        {"from_file shared=True overwrites an existing file", "torch.ops.aten.from_file.default",
         "refused: reads or writes files",
         "        from_file: \"u8[6]\" = torch.ops.aten.from_file.default(\"VICTIMS/existing.txt\", True, 6, "
         "dtype = torch.uint8)\n"
         "        bad: \"u8[6]\" = torch.ops.aten.fill_.Scalar(from_file, 65)\n" +
             ret},
        {"from_file shared=True writes a new shell script", "torch.ops.aten.from_file.default",
         "refused: reads or writes files",
         "        full: \"u8[10]\" = torch.ops.aten.full.default([10], 35, dtype = torch.uint8)\n"
         "        from_file: \"u8[10]\" = torch.ops.aten.from_file.default(\"VICTIMS/evil.sh\", True, 10, "
         "dtype = torch.uint8)\n"
         "        bad: \"u8[10]\" = torch.ops.aten.copy_.default(from_file, full)\n" +
             ret},
        {"from_file shared=True grows a file to 1 MiB", "torch.ops.aten.from_file.default",
         "refused: reads or writes files",
         "        from_file: \"u8[1048576]\" = torch.ops.aten.from_file.default(\"VICTIMS/small.bin\", True, "
         "1048576, dtype = torch.uint8)\n"
         "        bad: \"u8[1048576]\" = torch.ops.aten.fill_.Scalar(from_file, 7)\n" +
             ret},
        {"from_file.out into a given tensor", "torch.ops.aten.from_file.out",
         "refused: reads or writes files",
         "        empty: \"u8[6]\" = torch.ops.aten.empty.memory_format([6], dtype = torch.uint8)\n"
         "        from_file: \"u8[6]\" = torch.ops.aten.from_file.out(\"VICTIMS/existing.txt\", True, 6, out "
         "= "
         "empty)\n"
         "        bad: \"u8[6]\" = torch.ops.aten.fill_.Scalar(from_file, 66)\n" +
             ret},
        // The refused node comes after one that fails when it runs: the whole graph is checked first.
        {"from_file after a node that fails", "torch.ops.aten.from_file.default",
         "refused: reads or writes files",
         "        mm: \"f32[8, 8]\" = torch.ops.aten.mm.default(primals_1, primals_1)\n"
         "        from_file: \"u8[6]\" = torch.ops.aten.from_file.default(\"VICTIMS/existing.txt\", True, 6, "
         "dtype = torch.uint8)\n"
         "        bad: \"u8[6]\" = torch.ops.aten.fill_.Scalar(from_file, 67)\n" +
             ret},
        {"set_ onto a storage", "torch.ops.aten.set_.source_Storage", "refused: shares storage",
         "        set_: \"f32[8]\" = torch.ops.aten.set_.source_Storage(primals_1, primals_1)\n"
         "        bad: \"f32[8]\" = torch.ops.aten.relu.default(set_)\n" +
             ret},
    };
}

// The same from_file trick inside a higher-order op's body.
std::string bodyTrick() {
    return "class GraphModule(torch.nn.Module):\n"
           "    def forward(self, primals_1: \"f32[8]\"):\n"
           "        wrap_body_0 = self.wrap_body_0\n"
           "        tag_activation_checkpoint = "
           "torch.ops.higher_order.tag_activation_checkpoint(wrap_body_0, "
           "primals_1, use_reentrant = False)\n"
           "        getitem: \"f32[8]\" = tag_activation_checkpoint[0]\n"
           "        return (getitem,)\n"
           "\n"
           "    class wrap_body_0(torch.nn.Module):\n"
           "        def forward(self, primals_1: \"f32[8]\"):\n"
           "            from_file: \"u8[6]\" = torch.ops.aten.from_file.default(\"VICTIMS/existing.txt\", "
           "True, 6, "
           "dtype = torch.uint8)\n"
           "            fill: \"u8[6]\" = torch.ops.aten.fill_.Scalar(from_file, 68)\n"
           "            relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
           "            return (relu,)\n";
}

// What a child process did after applySandbox: operation -> errno (0 when it succeeded).
using Outcomes = std::map<std::string, int>;

// Runs the probe operations in a forked child, inside the sandbox (allowing writes to `allowed` only) or not.
Outcomes probeInChild(const QString& dir, const QString& allowed, bool sandboxed, std::string& error) {
    int fds[2];
    if (::pipe(fds) != 0)
        qFatal("pipe");
    const std::string d = dir.toStdString(), ok = allowed.toStdString();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        std::string out;
        auto note = [&](const char* what, long rc) {
            out += std::string(what) + "=" + std::to_string(rc < 0 ? errno : 0) + "\n";
        };
        if (sandboxed) {
            Expected<runtime::SandboxReport> report = runtime::applySandbox({ok});
            if (!report) {
                out = "error " + report.error().message + "\n";
                (void)!::write(fds[1], out.data(), out.size());
                ::_exit(0);
            }
            out += "abi=" + std::to_string(report->abi) + "\n";
        }
        note("write_allowed", ::open(ok.c_str(), O_WRONLY | O_TRUNC));
        note("write_other", ::open((d + "/other.txt").c_str(), O_WRONLY));
        note("append_other", ::open((d + "/other.txt").c_str(), O_WRONLY | O_APPEND));
        note("read_other", ::open((d + "/other.txt").c_str(), O_RDONLY));
        note("create", ::open((d + "/new.sh").c_str(), O_WRONLY | O_CREAT, 0755));
        note("truncate", ::truncate((d + "/other.txt").c_str(), 1));
        note("mkdir", ::mkdir((d + "/sub").c_str(), 0755));
        note("symlink", ::symlink("other.txt", (d + "/link").c_str()));
        note("rename", ::rename((d + "/other.txt").c_str(), (d + "/moved.txt").c_str()));
        note("unlink", ::unlink((d + "/victim.txt").c_str()));
        note("create_tmp", ::open("/tmp/jointscope-sandbox-probe.txt", O_WRONLY | O_CREAT | O_EXCL, 0644));
        const int s = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(1); // nothing listens there: refused unless the sandbox forbids trying
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        note("tcp_connect", ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr));
        (void)!::write(fds[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        text.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::unlink("/tmp/jointscope-sandbox-probe.txt");
    Outcomes outcomes;
    for (const std::string& line : splitLines(text)) {
        if (line.rfind("error ", 0) == 0)
            error = line;
        if (const size_t eq = line.find('='); eq != std::string::npos)
            outcomes[line.substr(0, eq)] = std::stoi(line.substr(eq + 1));
    }
    return outcomes;
}

// The kernel's Landlock ABI, or -1 when it has none.
int landlockAbi() {
    return static_cast<int>(::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U /*VERSION*/));
}

} // namespace

class TestRuntimeGuard : public QObject {
    Q_OBJECT

    QTemporaryDir work_;    // graph files and outputs
    QTemporaryDir victims_; // the files graphs attack; compared before and after

    void resetVictims() {
        QDir(victims_.path()).removeRecursively();
        QDir().mkpath(victims_.path());
        writeText(victims_.filePath("existing.txt"), "hello\n");
        writeText(victims_.filePath("small.bin"), "0123");
    }
    QString graphFile(const std::string& name, const std::string& text) {
        const QString path = work_.filePath(QString::fromStdString(name));
        writeText(path, replaceAll(text, "VICTIMS", victims_.path().toStdString()));
        return path;
    }

private slots:
    void initTestCase() {
        QVERIFY(work_.isValid() && victims_.isValid());
        if (landlockAbi() < 1)
            QSKIP("this kernel has no Landlock: the runtime commands refuse to run without --no-sandbox");
    }

    // Every trick, through every command that runs graphs: refused before anything runs, with the node's
    // line, exit 2, and not one byte changed.
    void fileTricksAreRefused_data() {
        QTest::addColumn<int>("trick");
        QTest::addColumn<QString>("command");
        const std::vector<Trick> all = tricks();
        for (int i = 0; i < static_cast<int>(all.size()); ++i)
            for (const char* command : {"run", "profile", "validate"})
                QTest::addRow("%s: %s", command, all[i].name) << i << QString(command);
    }
    void fileTricksAreRefused() {
        QFETCH(int, trick);
        QFETCH(QString, command);
        const Trick t = tricks()[trick];
        const std::string text = std::string(kHeader) + t.body;
        const QString file = graphFile("trick.txt", text);
        resetVictims();
        const auto before = snapshot(victims_.path());
        QStringList args{command, file};
        if (command == "run")
            args << "--save" << work_.filePath("out.safetensors");
        else if (command == "profile")
            args << "--no-db"
                 << "--reps"
                 << "1"
                 << "--warmup"
                 << "0";
        else
            args << "--num-fwd-outputs"
                 << "1";
        const Run run = runCli(args);
        QCOMPARE(run.exitCode, 2);
        const std::string refusedName =
            std::string(t.op) == "torch.ops.aten.set_.source_Storage" ? "set_" : "from_file";
        const std::string expected = file.toStdString() + ":" +
                                     std::to_string(lineOf(text, std::string(t.op) + "(")) +
                                     ": error: node '" + refusedName + "' (" + t.op + "): " + t.reason;
        QVERIFY2(run.err.find(expected) != std::string::npos, (expected + "\n---\n" + run.err).c_str());
        QCOMPARE(lineCount(run.err), size_t(1));
        QVERIFY(snapshot(victims_.path()) == before);
    }

    // A refused op inside a higher-order op's body is found before the graph runs, located on its own line.
    void fileTrickInBodyIsRefused() {
        const std::string text = bodyTrick();
        const QString file = graphFile("body.txt", text);
        resetVictims();
        const auto before = snapshot(victims_.path());
        const Run run = runCli({"run", file, "--save", work_.filePath("out.safetensors")});
        QCOMPARE(run.exitCode, 2);
        const std::string expected = file.toStdString() + ":" +
                                     std::to_string(lineOf(text, "aten.from_file")) +
                                     ": error: node 'from_file' (torch.ops.aten.from_file.default): refused: "
                                     "reads or writes files";
        QVERIFY2(run.err.find(expected) != std::string::npos, run.err.c_str());
        QVERIFY(snapshot(victims_.path()) == before);
    }

    // With the allowlist off, the same tricks reach LibTorch, and the OS guard stops them: the kernel refuses
    // to open the files for writing (EACCES), the run fails on the node, and nothing changes.
    void sandboxStopsTheTricksTheAllowlistWouldRefuse_data() {
        QTest::addColumn<int>("trick");
        const std::vector<Trick> all = tricks();
        for (int i = 0; i < 4; ++i) // the from_file ones
            QTest::addRow("%s", all[i].name) << i;
    }
    void sandboxStopsTheTricksTheAllowlistWouldRefuse() {
        QFETCH(int, trick);
        const Trick t = tricks()[trick];
        const std::string text = std::string(kHeader) + t.body;
        const QString file = graphFile("trick.txt", text);
        resetVictims();
        const auto before = snapshot(victims_.path());
        const Run run =
            runCli({"run", file, "--save", work_.filePath("out.safetensors"), "--no-op-allowlist"});
        QCOMPARE(run.exitCode, 2);
        const std::string expected = file.toStdString() + ":" +
                                     std::to_string(lineOf(text, "aten.from_file")) +
                                     ": error: node 'from_file' (" + t.op + "): ";
        QVERIFY2(run.err.find(expected) != std::string::npos, run.err.c_str());
        QVERIFY2(run.err.find("Permission denied") != std::string::npos, run.err.c_str());
        QVERIFY(snapshot(victims_.path()) == before);
        // Both guards off at once is refused.
        const Run both = runCli(
            {"run", file, "--save", work_.filePath("out.safetensors"), "--no-op-allowlist", "--no-sandbox"});
        QCOMPARE(both.exitCode, 64);
        QVERIFY(snapshot(victims_.path()) == before);
    }

    // applySandbox itself, in a forked child: writes outside the allowed file fail with EACCES (creating,
    // truncating, renaming, linking, removing included), the allowed file and all reads still work, and TCP
    // is closed where the ABI covers it. The same probes without the sandbox succeed, so the test can fail.
    void sandboxForbidsWritesButTheAllowedFile() {
        auto prepare = [](const QString& dir) {
            writeText(dir + "/allowed.out", "old");
            writeText(dir + "/other.txt", "other");
            writeText(dir + "/victim.txt", "victim");
        };
        QTemporaryDir free, guarded;
        prepare(free.path());
        prepare(guarded.path());
        std::string error;
        const Outcomes baseline = probeInChild(free.path(), free.filePath("allowed.out"), false, error);
        for (const char* op : {"write_allowed", "write_other", "append_other", "read_other", "create",
                               "truncate", "mkdir", "symlink", "rename", "unlink", "create_tmp"})
            QVERIFY2(baseline.count(op) && baseline.at(op) == 0, op);
        QCOMPARE(baseline.at("tcp_connect"), ECONNREFUSED);

        const auto before = snapshot(guarded.path());
        const Outcomes inside = probeInChild(guarded.path(), guarded.filePath("allowed.out"), true, error);
        QVERIFY2(error.empty(), error.c_str());
        const int abi = inside.at("abi");
        QVERIFY(abi >= 1);
        QCOMPARE(inside.at("write_allowed"), 0);
        QCOMPARE(inside.at("read_other"), 0);
        for (const char* op :
             {"write_other", "append_other", "create", "mkdir", "symlink", "rename", "unlink", "create_tmp"})
            QVERIFY2(inside.at(op) == EACCES,
                     (std::string(op) + "=" + std::to_string(inside.at(op))).c_str());
        if (abi >= 3)
            QCOMPARE(inside.at("truncate"), EACCES);
        if (abi >= 4)
            QCOMPARE(inside.at("tcp_connect"), EACCES);
        auto after = snapshot(guarded.path());
        QCOMPARE(after.at("allowed.out"), QByteArray()); // truncated: the one file it may write
        after.erase("allowed.out");
        auto expected = before;
        expected.erase("allowed.out");
        QVERIFY(after == expected);
    }

    // Where the kernel cannot set up the guard (here: a seccomp filter makes Landlock look absent, as on an
    // old kernel), the commands refuse to run, say why and what to pass, and run with --no-sandbox.
    void noLandlockMeansNoRunWithoutTheFlag() {
        const QString file =
            graphFile("plain.txt", std::string(kHeader) +
                                       "        relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
                                       "        return (relu,)\n");
        auto runHidden = [&](const QStringList& args) {
            QProcess process;
            process.setChildProcessModifier([] {
                static sock_filter filter[] = {
                    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
                    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_landlock_create_ruleset, 0, 1),
                    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                static sock_fprog program = {sizeof filter / sizeof filter[0], filter};
                if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                    ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
                    ::_exit(99);
            });
            process.start(test::cliPath(), args);
            process.waitForFinished(120000);
            return std::make_pair(process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
                                  process.readAllStandardError().toStdString());
        };
        const QString out = work_.filePath("plain.safetensors");
        QFile::remove(out);
        const auto [code, err] = runHidden({"run", file, "--save", out});
        QCOMPARE(code, 5);
        QVERIFY2(err.find("no Landlock") != std::string::npos &&
                     err.find("--no-sandbox") != std::string::npos,
                 err.c_str());
        QCOMPARE(QFileInfo(out).size(), qint64(0)); // nothing ran
        const auto [code2, err2] = runHidden({"run", file, "--save", out, "--no-sandbox"});
        QVERIFY2(code2 == 0, err2.c_str());
        QVERIFY(QFileInfo(out).size() > 0);
    }

    // Integer arithmetic in graphs and in symbolic sizes: no signal, a located error on the node or
    // placeholder, exit 2 (run) / 4 (validate).
    void integerFaultsAreLocatedErrors_data() {
        QTest::addColumn<QString>("body"); // lines after the header; the offending line contains "@"
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("shape"); // primals_1's shape
        auto row = [](const char* name, const char* body, const char* message, const char* shape = "8") {
            QTest::newRow(name) << QString(body) << QString(message) << QString(shape);
        };
        row("floordiv INT64_MIN by -1", "        floordiv = -9223372036854775808 // -1 @\n",
            "node 'floordiv' (operator.floordiv): integer overflow: -9223372036854775808 // -1 does not fit "
            "in 64 "
            "bits");
        row("operator.floordiv call", "        floordiv = operator.floordiv(-9223372036854775808, -1) @\n",
            "integer overflow: -9223372036854775808 // -1");
        row("floordiv by zero", "        floordiv = 7 // 0 @\n", "integer division by zero");
        row("mod by zero", "        mod = 7 % 0 @\n", "integer division by zero");
        row("mul overflow", "        mul = 4611686018427387904 * 2 @\n",
            "integer overflow: 4611686018427387904 * 2");
        row("neg of INT64_MIN", "        sub = -9223372036854775807 - 1\n        neg = -sub @\n",
            "node 'neg' (operator.neg): integer overflow");
        row("lshift out of range", "        lshift = 1 << 64 @\n", "integer overflow: 1 << 64");
        row("lshift into the sign", "        lshift = 1 << 63 @\n", "integer overflow: 1 << 63");
        row("negative shift", "        rshift = 1 >> -1 @\n", "negative shift count -1");
        row("pow overflow", "        pow_1 = 3 ** 41 @\n", "integer overflow: 3 ** 41");
        row("symbolic size floordiv", "", "cannot evaluate symbolic size",
            "(s0 - 9223372036854775807 - 17)//(-1)");
        row("symbolic FloorDiv", "", "int64 overflow", "FloorDiv(-9223372036854775807 - s0, -1)");
        row("symbolic Mod by zero", "", "division by zero", "Mod(s0, s0 - 16)");
        row("symbolic product overflow", "", "int64 overflow",
            "s0*s0*s0*s0*s0*s0*s0*s0*s0*s0*s0*s0*s0*s0*s0*s0");
        // LibTorch's own integer division kernel traps on INT64_MIN / -1: the fault guard names the node.
        row("tensor div trunc INT64_MIN by -1",
            "        full: \"i64[4]\" = torch.ops.aten.full.default([4], -9223372036854775808, dtype = "
            "torch.int64)\n"
            "        div: \"i64[4]\" = torch.ops.aten.div.Tensor_mode(full, -1, rounding_mode = 'trunc') @\n",
            "node 'div' (torch.ops.aten.div.Tensor_mode): the kernel raised SIGFPE");
    }
    void integerFaultsAreLocatedErrors() {
        QFETCH(QString, body);
        QFETCH(QString, message);
        QFETCH(QString, shape);
        const bool inSize = body.isEmpty();
        std::string text = "class GraphModule(torch.nn.Module):\n"
                           "    def forward(self, primals_1: \"f32[" +
                           shape.toStdString() + "]\"):\n" + body.toStdString() +
                           "        relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
                           "        return (relu,)\n";
        const int line = inSize ? 2 : lineOf(text, "@");
        text = replaceAll(text, " @\n", "\n");
        const QString file = graphFile("int.txt", text);
        const Run run = runCli({"run", file, "--save", work_.filePath("int.safetensors"), "--bind", "s0=16"});
        QCOMPARE(run.exitCode, 2); // not -2: no signal
        // FILE:LINE: error: from the runtime, FILE:LINE:COL: error: from the reader's own size checks.
        const std::string expected = file.toStdString() + ":" + std::to_string(line) + ":";
        QVERIFY2(run.err.find(expected) != std::string::npos, run.err.c_str());
        QVERIFY2(run.err.find(" error: ") != std::string::npos, run.err.c_str());
        // Literal operands are refused by the reader already (its own words: "int64 overflow in a // b",
        // "division by zero"); the rest by the interpreter.
        auto explains = [&](const std::string& err) {
            return err.find(message.toStdString()) != std::string::npos ||
                   err.find("int64 overflow in") != std::string::npos ||
                   err.find(": division by zero") != std::string::npos;
        };
        QVERIFY2(explains(run.err), run.err.c_str());
        QCOMPARE(lineCount(run.err), size_t(1));
        // validate reads and runs the same way: exit 2 (refused by the reader) or 4 (a graph cannot run).
        const Run validate = runCli({"validate", file, "--num-fwd-outputs", "1", "--bind", "s0=16"});
        QVERIFY(validate.exitCode == 4 || validate.exitCode == 2);
        QVERIFY2(explains(validate.err), validate.err.c_str());
    }

    // profile goes on past a node that fails (exit 0) and warns on the node's line; a kernel that traps ends
    // it with the located error and exit 2.
    void profileLocatesNodeFaults() {
        const std::string text = std::string(kHeader) +
                                 "        floordiv = -9223372036854775808 // -1\n"
                                 "        relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
                                 "        return (relu, floordiv)\n";
        const QString file = graphFile("pfdiv.txt", text);
        // The reader refuses the literal overflow before profiling starts: one located error, exit 2.
        const Run run = runCli({"profile", file, "--no-db", "--reps", "1", "--warmup", "0"});
        QVERIFY2(run.exitCode == 2, run.err.c_str());
        const std::string expected = file.toStdString() + ":3:";
        QVERIFY2(run.err.find(expected) != std::string::npos, run.err.c_str());
        QVERIFY2(run.err.find(
                     "node 'floordiv' (operator.floordiv): int64 overflow in -9223372036854775808 // -1") !=
                     std::string::npos,
                 run.err.c_str());

        const std::string trap =
            std::string(kHeader) +
            "        full: \"i64[4]\" = torch.ops.aten.full.default([4], -9223372036854775808, dtype = "
            "torch.int64)\n"
            "        div: \"i64[4]\" = torch.ops.aten.div.Tensor_mode(full, -1, rounding_mode = 'trunc')\n"
            "        return (div,)\n";
        const QString trapFile = graphFile("ptrap.txt", trap);
        const Run trapped = runCli({"profile", trapFile, "--no-db", "--reps", "1", "--warmup", "0"});
        QCOMPARE(trapped.exitCode, 2);
        QVERIFY2(trapped.err.find(trapFile.toStdString() +
                                  ":4: error: node 'div' (torch.ops.aten.div.Tensor_mode): "
                                  "the kernel raised SIGFPE") != std::string::npos,
                 trapped.err.c_str());
    }

    // Symbolic sizes evaluate with Python's semantics on int64 and never trap: what does not fit is an error.
    void symbolicSizesNeverTrap() {
        const SymbolBindings s0{{"s0", 16}};
        auto value = [&](const char* expr) {
            Expected<int64_t> v = evaluateSymbolic(expr, s0);
            if (!v)
                qFatal("%s: %s", expr, v.error().message.c_str());
            return *v;
        };
        auto error = [&](const char* expr) {
            Expected<int64_t> v = evaluateSymbolic(expr, s0);
            return v ? std::string("no error, value ") + std::to_string(*v) : v.error().message;
        };
        for (const char* expr :
             {"(-9223372036854775807 - 1)//(-1)", "FloorDiv(-9223372036854775807 - 1, -1)",
              "CeilDiv(-9223372036854775807 - 1, -1)", "-(-9223372036854775807 - 1)", "99999999999999999999",
              "3037000500*3037000500", "9223372036854775807 + s0", "-9223372036854775807 - s0"})
            QVERIFY2(error(expr).find("int64 overflow") != std::string::npos ||
                         error(expr).find("does not fit in int64") != std::string::npos,
                     (expr + (": " + error(expr))).c_str());
        QVERIFY(error("s0 % (s0 - 16)").find("division by zero") != std::string::npos);
        QVERIFY(error("Mod(s0, 0)").find("division by zero") != std::string::npos);
        QCOMPARE(value("Mod(-9223372036854775807 - 1, -1)"), int64_t(0));
        QCOMPARE(value("(-9223372036854775807 - 1) % (-1)"), int64_t(0));
        QCOMPARE(value("FloorDiv(-7, 2)"), int64_t(-4));
        QCOMPARE(value("CeilDiv(-7, 2)"), int64_t(-3));
        QCOMPARE(value("CeilDiv(7, 2)"), int64_t(4));
        QCOMPARE(value("Mod(-7, 2)"), int64_t(1));
        QCOMPARE(value("-7 % 3"), int64_t(2));
        QCOMPARE(value("7 % -3"), int64_t(-2));
        QCOMPARE(value("(-9223372036854775807 - 1)//1"), std::numeric_limits<int64_t>::min());
        QCOMPARE(value("9223372036854775807"), std::numeric_limits<int64_t>::max());
    }

    // Python semantics where int64 holds the result: these run (no error, no signal).
    void integerEdgeCasesThatFit() {
        const QString file =
            graphFile("fit.txt", std::string(kHeader) +
                                     "        mod = -9223372036854775808 % -1\n"
                                     "        floordiv = -7 // 2\n"
                                     "        lshift = -1 << 63\n"
                                     "        rshift = -5 >> 70\n"
                                     "        relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
                                     "        return (relu, mod, floordiv, lshift, rshift)\n");
        const Run run = runCli({"run", file, "--save", work_.filePath("fit.safetensors")});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
    }

    // Shapes are checked before LibTorch allocates: negative sizes, byte counts that overflow 64 bits and
    // tensors larger than the machine can hold are located errors, never LibTorch's backtrace.
    void badShapesAreLocatedErrors_data() {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("message");
        QTest::newRow("negative placeholder size") << "s0 - 100"
                                                   << ""
                                                   << "negative size -84 in dimension 0";
        // Refused by the reader already (core/graph size checks), with the column of the size.
        QTest::newRow("numel overflows") << "4611686018427387904, 4"
                                         << ""
                                         << "the element count overflows int64";
        QTest::newRow("bytes overflow") << "2305843009213693952"
                                        << ""
                                        << "the byte size overflows int64";
        QTest::newRow("more than the machine has") << "1099511627776"
                                                   << ""
                                                   << "would need 4194304 MiB";
        QTest::newRow("factory op, negative size")
            << "8"
            << "        full: \"f32[8]\" = torch.ops.aten.full.default([-8], 1.0) @\n"
            << "node 'full' (torch.ops.aten.full.default): argument 'size': negative size -8";
        QTest::newRow("factory op, overflowing size")
            << "8"
            << "        empty: \"f32[8]\" = torch.ops.aten.empty.memory_format([4294967296, 4294967296]) @\n"
            << "argument 'size': shape [4294967296, 4294967296] overflows a 64-bit byte count";
        QTest::newRow("factory op, too large")
            << "8"
            << "        new_empty: \"f32[8]\" = torch.ops.aten.new_empty.default(primals_1, [1099511627776]) "
               "@\n"
            << "argument 'size': shape [1099511627776] would need 4194304 MiB";
    }
    void badShapesAreLocatedErrors() {
        QFETCH(QString, shape);
        QFETCH(QString, body);
        QFETCH(QString, message);
        std::string text = "class GraphModule(torch.nn.Module):\n"
                           "    def forward(self, primals_1: \"f32[" +
                           shape.toStdString() + "]\"):\n" + body.toStdString() +
                           "        relu: \"f32[8]\" = torch.ops.aten.relu.default(primals_1)\n"
                           "        return (relu,)\n";
        const int line = body.isEmpty() ? 2 : lineOf(text, "@");
        text = replaceAll(text, " @\n", "\n");
        const QString file = graphFile("shape.txt", text);
        const Run run =
            runCli({"run", file, "--save", work_.filePath("shape.safetensors"), "--bind", "s0=16"});
        QCOMPARE(run.exitCode, 2);
        // FILE:LINE: error: from the runtime, FILE:LINE:COL: error: from the reader's own size checks.
        const std::string expected = file.toStdString() + ":" + std::to_string(line) + ":";
        QVERIFY2(run.err.find(expected) != std::string::npos, run.err.c_str());
        QVERIFY2(run.err.find(" error: ") != std::string::npos, run.err.c_str());
        QVERIFY2(run.err.find(message.toStdString()) != std::string::npos, run.err.c_str());
        QCOMPARE(lineCount(run.err), size_t(1));
        QVERIFY2(run.err.find("internal error") == std::string::npos, run.err.c_str());
    }

    // A LibTorch error is one line naming the file, line, node and op; its C++ backtrace only with --debug.
    void libtorchErrorIsOneLocatedLine() {
        const std::string text =
            "class GraphModule(torch.nn.Module):\n"
            "    def forward(self, primals_1: \"f32[8, 4]\", primals_2: \"f32[3, 5]\"):\n"
            "        relu: \"f32[8, 4]\" = torch.ops.aten.relu.default(primals_1)\n"
            "        mm: \"f32[8, 5]\" = torch.ops.aten.mm.default(relu, primals_2)\n"
            "        return (mm,)\n";
        const QString file = graphFile("mm.txt", text);
        // validate says which graph it was running between the location and the node.
        const std::string location = file.toStdString() + ":4: error: ";
        // LibTorch's own words vary by version ("mm: mat1 and mat2 ..." since 2.x): the node, then its text.
        const std::string node = "node 'mm' (torch.ops.aten.mm.default): ";
        const std::string expected = "mat1 and mat2 shapes cannot be multiplied (8x4 and 3x5)\n";
        for (const QStringList& args : {QStringList{"run", file, "--save", work_.filePath("mm.safetensors")},
                                        QStringList{"validate", file, "--num-fwd-outputs", "1"}}) {
            const Run run = runCli(args);
            QVERIFY(run.exitCode == 2 || run.exitCode == 4);
            QVERIFY2(run.err.rfind(location, 0) == 0, run.err.c_str());
            QVERIFY2(run.err.find(node) != std::string::npos, run.err.c_str());
            QVERIFY2(run.err.find(expected) != std::string::npos, run.err.c_str());
            QCOMPARE(lineCount(run.err), size_t(1));
        }
        const Run debug = runCli({"run", file, "--save", work_.filePath("mm.safetensors"), "--debug"});
        QCOMPARE(debug.exitCode, 2);
        QVERIFY2(debug.err.find("Exception raised from") != std::string::npos, debug.err.c_str());
    }

    // The allowlist as data, over every op this LibTorch registers: the file, storage-sharing, output and
    // process-wide ops are refused; the tensor math graphs use is not; and the refused set stays small.
    void allowlistOverThisLibTorch() {
        std::map<std::string, std::string> refused;
        size_t considered = 0;
        for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
            if (name.name.rfind("aten::", 0) != 0 && name.name.rfind("prims::", 0) != 0)
                continue;
            auto op = c10::Dispatcher::singleton().findSchema(name);
            if (!op || !op->hasSchema())
                continue;
            ++considered;
            if (std::optional<std::string> why = runtime::opRefusal(op->schema()))
                refused[name.name + (name.overload_name.empty() ? "" : "." + name.overload_name)] = *why;
        }
        QVERIFY(considered > 1000);
        for (const auto& [op, why] : refused)
            qInfo("refused %s: %s", op.c_str(), why.c_str());
        auto reason = [&](const std::string& op) {
            return refused.count(op) ? refused.at(op) : std::string();
        };
        QVERIFY(reason("aten::from_file").find("files") != std::string::npos);
        QVERIFY(reason("aten::set_.source_Storage").find("storage") != std::string::npos);
        QVERIFY(reason("aten::set_.source_Storage_storage_offset").find("storage") != std::string::npos);
        if (c10::Dispatcher::singleton().findSchema({"aten::_print", ""})) // torch >= 2
            QVERIFY(reason("aten::_print").find("output") != std::string::npos);
        for (const char* op : {"aten::mm",
                               "aten::addmm",
                               "aten::relu",
                               "aten::convolution",
                               "aten::native_layer_norm",
                               "aten::embedding",
                               "aten::gather",
                               "aten::div.Tensor_mode",
                               "aten::gelu",
                               "aten::einsum",
                               "aten::_softmax",
                               "aten::native_dropout",
                               "aten::nll_loss_forward",
                               "aten::view",
                               "aten::set_.source_Tensor",
                               "aten::empty_strided",
                               "aten::full",
                               "aten::copy_",
                               "aten::index_put_",
                               "aten::linalg_vector_norm"})
            QVERIFY2(!refused.count(op), (std::string(op) + ": " + reason(op)).c_str());
        // Apart from the named-tensor overloads (which ATen graphs do not use), a few dozen at most.
        size_t notNamed = 0;
        for (const auto& [op, why] : refused)
            notNamed += why.find("named-tensor") == std::string::npos;
        QVERIFY2(notNamed < 30, std::to_string(notNamed).c_str());
    }
};

QTEST_GUILESS_MAIN(TestRuntimeGuard)
#include "tst_runtime_guard.moc"
