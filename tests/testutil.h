// Helpers shared by the QtTest suites. Their bodies are compiled once (testutil.cpp, jointscope_testutil):
// each suite parses only these declarations and <QTest>, not the whole QtCore module.
#pragma once

#include "graph/Graph.h"

#include <QFloat16> // QCOMPARE's qfloat16 overload must be complete where a suite compares nlohmann::json
#include <QString>
#include <QStringList>
#include <QTest>

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope::test {

// Where the suites find the shared data, the source tree, the CLI: read at run time from
// jointscope_test_paths beside the test executable (tests/CMakeLists.txt writes it), not compiled in, so
// that a clone elsewhere compiles the same objects and ccache serves them.
std::string testPath(const std::string& key);

QString cliPath();

// One run of jointscope-cli: exit code (-2 if it crashed), stdout and stderr.
struct Run {
    int exitCode = -1;
    std::string out;
    std::string err;
};

Run runCli(const QStringList& args);

// --device values of this machine as `jointscope-cli devices` should list them: the CPU, then one cuda:N per
// GPU device node the NVIDIA driver exposes (counted here, not by jointscope).
QStringList expectedDeviceSpecs();

// The models captured from torch 1.13 with every file (joint, forward, backward, meta sidecar, reference
// decisions): ../shared/graphs/torch-1.13/MODEL.
inline constexpr const char* kTorch113Models[] = {"mlp", "gpt_block2", "convnet"};

// A QString column `column` with one row per kTorch113Models entry, for a test's _data function.
void addTorch113ModelRows(const char* column);

std::string sharedPath(const std::string& relative);

std::string sourcePath(const std::string& relative);

// A large graph built from real torch layers by bench/gen_big_graph.py (STYLE 113 or 2x, SIZE "--layers=48"
// or
// "--nodes=N") as `out`; what the generator counted: its repeats and len(graph.nodes).
struct GeneratedGraph {
    std::string path;
    size_t repeats = 0;
    size_t nodes = 0;
};

GeneratedGraph generateBigGraph(const QString& out, const QString& style, const QString& size);

// The first graph of a file under shared/; a suite without its data cannot run at all.
Graph loadGraphAt(const std::string& path);

Graph loadSharedGraph(const std::string& relative);

// A graph of tests/data, by its path from the source root.
Graph loadSourceGraph(const std::string& relative);

std::string readFile(const std::string& path);

// Lines of text without their '\n' (and '\r': multi_rank_rank_1.log has CRLF line ends); a final empty line
// is kept when text ends with '\n', as str.split('\n') does.
std::vector<std::string> splitLines(const std::string& text);

// Nodes of an AOT graph's print_readable text: placeholders + single-name assignments in forward's body +
// output.
uint64_t countAotNodes(const std::string& payload);

// A node for hand-built graphs: call_function targets parsed as FX prints them, others kept as names.
Node makeNode(std::string name, NodeOp op, std::string target, std::vector<Value> args = {});

// A float32 tensor of the given sizes (no strides), for hand-built graphs.
TensorMeta f32(std::vector<int64_t> sizes);

inline QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// One graph file no engine may see (docs/formats.md, "Bad input"): where the reader must point and what it
// says.
struct BadGraphInput {
    std::string name;
    std::string bytes;
    int line = 0;
    int col = 0;
    std::string message; // part of the message
};

// Each bad-input class as an FX text and as jointscope JSON, counted by hand: the FX statement under test is
// on line 3 at 8 spaces (its annotation text starts at column 13, its first size at 17); the JSON node under
// test is the object on line 3, column 2.
std::vector<BadGraphInput> badGraphInputs();

// Writes `bytes` to `path` as they are (binary, truncating).
void writeFile(const std::string& path, const std::string& bytes);

// The columns of a bad-input test's data: the file's bytes, the line and column its error must point at,
// and part of the message it must carry.
void addBadInputColumns();

// badGraphInputs() as rows of those columns.
void addBadGraphRows();

// The current row of a bad-input test.
BadGraphInput fetchBadInput();

} // namespace jointscope::test

// QVERIFY an Expected<T>, printing its diagnostic on failure.
#define JS_VERIFY_EXPECTED(e) QVERIFY2(bool(e), (e) ? "" : (e).error().format().c_str())
