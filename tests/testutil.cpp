#include "testutil.h"

#include "io/GraphFile.h"

#include <QDir>
#include <QProcess>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

namespace jointscope::test {

std::string testPath(const std::string& key) {
    static const std::map<std::string, std::string> paths = [] {
        std::map<std::string, std::string> read;
        std::error_code ec;
        const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        std::ifstream in(exe.parent_path() / "jointscope_test_paths");
        std::string line;
        while (std::getline(in, line))
            if (const size_t eq = line.find('='); eq != std::string::npos)
                read[line.substr(0, eq)] = line.substr(eq + 1);
        return read;
    }();
    const auto it = paths.find(key);
    if (it == paths.end())
        qFatal("%s: not in jointscope_test_paths beside the test executable (build the tests with CMake)",
               key.c_str());
    return it->second;
}

QString cliPath() {
    return QString::fromStdString(testPath("JOINTSCOPE_CLI"));
}

Run runCli(const QStringList& args) {
    QProcess process;
    process.start(cliPath(), args);
    Run run;
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
        run.err = "timed out";
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = process.readAllStandardOutput().toStdString();
    run.err = process.readAllStandardError().toStdString();
    return run;
}

QStringList expectedDeviceSpecs() {
    QStringList specs{QStringLiteral("cpu")};
    const QStringList gpus =
        QDir(QStringLiteral("/dev")).entryList({QStringLiteral("nvidia[0-9]*")}, QDir::System);
    for (qsizetype i = 0; i < gpus.size(); ++i)
        specs << QStringLiteral("cuda:%1").arg(i);
    return specs;
}

void addTorch113ModelRows(const char* column) {
    QTest::addColumn<QString>(column);
    for (const char* model : kTorch113Models)
        QTest::newRow(model) << QString(model);
}

std::string sharedPath(const std::string& relative) {
    return testPath("JOINTSCOPE_SHARED_DIR") + "/" + relative;
}

std::string sourcePath(const std::string& relative) {
    return testPath("JOINTSCOPE_SOURCE_DIR") + "/" + relative;
}

GeneratedGraph generateBigGraph(const QString& out, const QString& style, const QString& size) {
    QProcess python;
    python.start(QStringLiteral("python3"),
                 {QString::fromStdString(sourcePath("bench/gen_big_graph.py")), QStringLiteral("--shared"),
                  QString::fromStdString(testPath("JOINTSCOPE_SHARED_DIR")), QStringLiteral("--style"), style,
                  size, QStringLiteral("--out"), out});
    if (!python.waitForFinished(300000) || python.exitCode() != 0)
        qFatal("gen_big_graph.py failed: %s", python.readAllStandardError().constData());
    const std::string said = python.readAllStandardOutput().toStdString();
    std::smatch m;
    if (!std::regex_search(said, m, std::regex(R"((\d+) repeats, (\d+) nodes)")))
        qFatal("gen_big_graph.py said: %s", said.c_str());
    return {out.toStdString(), std::stoul(m[1]), std::stoul(m[2])};
}

Graph loadGraphAt(const std::string& path) {
    auto file = GraphFile::open(path);
    if (!file)
        qFatal("%s", file.error().format().c_str());
    auto graph = file->load(0);
    if (!graph)
        qFatal("%s", graph.error().format().c_str());
    return graph.take();
}

Graph loadSharedGraph(const std::string& relative) {
    return loadGraphAt(sharedPath(relative));
}

Graph loadSourceGraph(const std::string& relative) {
    return loadGraphAt(sourcePath(relative));
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        qFatal("cannot read %s", path.c_str());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        lines.push_back(std::move(line));
        pos = end + 1;
    }
    return lines;
}

uint64_t countAotNodes(const std::string& payload) {
    const auto lines = splitLines(payload);
    size_t i = 0;
    while (i < lines.size() && lines[i].rfind("    def forward(", 0) != 0)
        ++i;
    if (i == lines.size())
        return 0;
    // Signature: up to the ')' matching forward's '(' (strings and comments skipped).
    std::string signature;
    int depth = 0;
    bool started = false;
    for (; i < lines.size(); ++i) {
        bool inString = false;
        const std::string& l = lines[i];
        for (size_t k = 0; k < l.size(); ++k) {
            char c = l[k];
            if (inString) {
                inString = c != '"';
                continue;
            }
            if (c == '"') {
                inString = true;
                continue;
            }
            if (c == '#')
                break;
            if (c == '(') {
                if (depth++ == 0) {
                    started = true;
                    continue;
                }
            } else if (c == ')' && --depth == 0) {
                break;
            }
            if (started && depth >= 1)
                signature += c;
        }
        if (started && depth == 0)
            break;
        signature += ' ';
    }
    uint64_t params = 0;
    {
        std::string name;
        int nest = 0;
        auto flush = [&] {
            static const std::regex ident("^\\s*([A-Za-z_]\\w*)");
            std::smatch m;
            if (std::regex_search(name, m, ident) && m[1] != "self")
                ++params;
            name.clear();
        };
        for (char c : signature) {
            if (c == '[' || c == '(')
                ++nest;
            if (c == ']' || c == ')')
                --nest;
            if (c == ',' && nest == 0)
                flush();
            else
                name += c;
        }
        flush();
    }
    static const std::regex assignment("^        [A-Za-z_]\\w*(: \"[^\"]*\")? = ");
    static const std::regex flatten("^        ([\\w, ]+) = fx_pytree\\.tree_flatten_spec\\(");
    uint64_t assignments = 0;
    std::optional<uint64_t> flattened;
    for (++i; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.find_first_not_of(' ') == std::string::npos)
            continue;
        if (l.find_first_not_of(' ') <= 4)
            break;
        std::smatch m;
        if (std::regex_search(l, m, flatten)) {
            uint64_t names = 0;
            std::string piece;
            for (char c : std::string(m[1]) + ",") {
                if (c != ',') {
                    piece += c;
                    continue;
                }
                names += piece.find_first_not_of(' ') != std::string::npos;
                piece.clear();
            }
            flattened = names;
        } else if (std::regex_search(l, assignment)) {
            ++assignments;
        }
    }
    return (flattened ? *flattened : params) + assignments + 1;
}

Node makeNode(std::string name, NodeOp op, std::string target, std::vector<Value> args) {
    Node n;
    n.name = std::move(name);
    n.op = op;
    n.target = op == NodeOp::CallFunction ? Target::parseFunction(target) : Target::name(target);
    n.args = std::move(args);
    return n;
}

TensorMeta f32(std::vector<int64_t> sizes) {
    TensorMeta t;
    t.dtype = DType::Float32;
    for (int64_t s : sizes)
        t.sizes.push_back({s, {}});
    return t;
}

std::vector<BadGraphInput> badGraphInputs() {
    auto fx = [](const std::string& statement, const std::string& result) {
        return "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, 4]\"):\n        " +
               statement + "\n        return (" + result + ",)\n";
    };
    const std::string relu = " = torch.ops.aten.relu.default(x)";
    auto json = [](const std::string& nodes) {
        return "{\"format\": \"jointscope-graph\", \"version\": 1, \"graph\": {\"nodes\": [\n"
               " {\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\"},\n" +
               nodes +
               " {\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", \"args\": [null]}\n]}}\n";
    };
    auto call = [](const std::string& name, const std::string& target, const std::string& args) {
        return " {\"name\": \"" + name + "\", \"op\": \"call_function\", \"target\": \"" + target +
               "\", \"args\": [" + args + "]},\n";
    };
    auto tensor = [](const std::string& sizes) {
        return " {\"name\": \"y\", \"op\": \"placeholder\", \"target\": \"y\", \"output_kind\": \"tensor\", "
               "\"outputs\": [{\"dtype\": \"float32\", \"sizes\": [" +
               sizes + "]}]},\n";
    };
    const std::string deep = std::string(20000, '(') + "s0" + std::string(20000, ')');
    const std::string mlp = readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
    const std::string cut = mlp.substr(0, mlp.find("return pytree.tree_unflatten(") + 19);
    return {
        {"fx: 20000 nested parens in a size", fx("y: \"f32[" + deep + "]\"" + relu, "y"), 3, 17 + 256,
         "size 0: nesting deeper than 256 levels"},
        {"fx: INT64_MIN // -1 in a size", fx("y: \"f32[(-9223372036854775808)//(-1)]\"" + relu, "y"), 3,
         17 + 22, "size 0: int64 overflow in -9223372036854775808 // -1"},
        {"fx: operator.floordiv(INT64_MIN, -1)", fx("y = operator.floordiv(-9223372036854775808, -1)", "y"),
         3, 13, "node 'y' (operator.floordiv): int64 overflow in -9223372036854775808 // -1"},
        {"fx: in-place statement cut before the node's name", fx("x += x;", "x"), 3, 16,
         "expected the node's name after the in-place statement, found end of line"},
        {"fx: in-place statement bound to another node", fx("x[0] = 1.0;  s = y", "s"), 3, 26,
         "expected 'x', the node the in-place statement changed, found 'y'"},
        {"fx: mm with one argument", fx("mm: \"f32[4, 4]\" = torch.ops.aten.mm.default(x)", "mm"), 3, 27,
         "node 'mm' (torch.ops.aten.mm.default): missing required argument 'mat2'"},
        {"fx: negative size", fx("y: \"f32[4, -1]\"" + relu, "y"), 3, 20, "negative size -1 in dimension 1"},
        {"fx: 2^62 size", fx("y: \"f32[4611686018427387904]\"" + relu, "y"), 3, 17,
         "the byte size overflows int64"},
        {"fx: INT64_MAX size", fx("y: \"f32[9223372036854775807]\"" + relu, "y"), 3, 17,
         "the byte size overflows int64"},
        {"fx: truncated inside return pytree.tree_", cut, 30, 16,
         "expected 'pytree.tree_unflatten(...)' after 'return' (truncated file?)"},
        {"json: cycle",
         json(call("a", "aten.add.Tensor", "{\"node\": \"x\"}, {\"node\": \"b\"}") +
              call("b", "aten.relu.default", "{\"node\": \"a\"}")),
         3, 2, "node 'a' (torch.ops.aten.add.Tensor) is on a cycle: 'a' -> 'b' -> 'a'"},
        {"json: forward reference",
         json(call("a", "aten.relu.default", "{\"node\": \"b\"}") +
              call("b", "aten.relu.default", "{\"node\": \"x\"}")),
         3, 2, "node 'a' (torch.ops.aten.relu.default) uses 'b', which is defined after it"},
        {"json: mm with one argument", json(call("mm", "aten.mm.default", "{\"node\": \"x\"}")), 3, 2,
         "node 'mm' (torch.ops.aten.mm.default): missing required argument 'mat2'"},
        {"json: negative size", json(tensor("-4")), 3, 2,
         "outputs[0].sizes[0]: negative size -4 in dimension 0"},
        {"json: 2^62 size", json(tensor("4611686018427387904")), 3, 2, "the byte size overflows int64"},
        {"json: INT64_MAX size", json(tensor("9223372036854775807")), 3, 2, "the byte size overflows int64"},
        {"json: INT64_MIN // -1 in a size", json(tensor("\"(-9223372036854775808)//(-1)\"")), 3, 2,
         "int64 overflow in -9223372036854775808 // -1"},
        {"json: 20000 nested parens in a size", json(tensor("\"" + deep + "\"")), 3, 2,
         "nesting deeper than 256 levels"},
    };
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void addBadInputColumns() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("col");
    QTest::addColumn<QString>("message");
}

void addBadGraphRows() {
    for (const BadGraphInput& bad : badGraphInputs())
        QTest::newRow(bad.name.c_str())
            << QByteArray::fromStdString(bad.bytes) << bad.line << bad.col << q(bad.message);
}

BadGraphInput fetchBadInput() {
    QFETCH(QByteArray, bytes);
    QFETCH(int, line);
    QFETCH(int, col);
    QFETCH(QString, message);
    return {QTest::currentDataTag(), bytes.toStdString(), line, col, message.toStdString()};
}

} // namespace jointscope::test
